import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { packageVersion } from './version.js';
import { resolve } from 'node:path';
import { nearest } from '../manifests/suggest.js';
import { COMMAND_NAMES, OPTIONS, commandTakes, type CommandName, type ParsedLists, type ParsedValues } from './options.js';
import { UsageError, type CommandContext, type ContextOf } from './context.js';
import { logOptionProblem, parseSettings, settingsFor, type Settings } from './settings.js';
import { settleStateDir } from './state-dir.js';

/** Each command's handler, given the settings of its own options (settingsFor). */
const COMMANDS: { [C in CommandName]: () => Promise<(context: ContextOf<C>) => Promise<number>> } = {
  reconcile: async () => (await import('./commands/reconcile.js')).run,
  validate: async () => (await import('./commands/validate.js')).run,
  status: async () => (await import('./commands/status.js')).run,
  export: async () => (await import('./commands/export.js')).run,
  branch: async () => (await import('./commands/branch.js')).run,
  emulator: async () => (await import('./commands/emulator.js')).run,
  trigger: async () => (await import('./commands/trigger.js')).run,
  approve: async () => (await import('./commands/rollout-control.js')).runApprove,
  resume: async () => (await import('./commands/rollout-control.js')).runResume,
  apply: async () => (await import('./commands/apply.js')).run,
  show: async () => (await import('./commands/show.js')).run,
  render: async () => (await import('./commands/render.js')).run,
};

const USAGE = `Usage:
  reconcile [DIR] [options]            apply once and exit
  reconcile [DIR] --dry-run [options]  plan only: GET requests only, nothing written
  reconcile [DIR] --watch [options]    long-running daemon (add --dry-run: detect drift only)
  reconcile validate [DIR]             offline schema and reference checks, no token needed
  reconcile render [DIR]               print the documents the ProjectSets make, as YAML (offline)
  reconcile status [DIR]               per resource: in sync, drifted, pending, failed, last observed
  reconcile export (--project REF | --all) [--out DIR]
                                       write manifests for live projects (adoption)
  reconcile branch push|reset NAME --project P
                                       branch actions (not state)
  reconcile emulator [options]         run the Management API emulator
  reconcile trigger [--project P]      ask a running daemon for an immediate pass (its /reconcile endpoint)
  reconcile approve [--revision R] [--project P]
                                       approve changes a running daemon holds for approval (its /approve endpoint)
  reconcile resume [--rollout NAME] [--revision R]
                                       continue a halted rollout (the daemon's /resume endpoint)
  reconcile [DIR] --dry-run --out FILE write the plan as data (a saved plan) as well as rendering it
  reconcile apply FILE [DIR]           apply exactly a saved plan to DIR (default .), or refuse it whole when it is stale
  reconcile show FILE [--output ...]   render a saved plan

The access token comes from MANAGEMENT_API_TOKEN or --token-file, never from a flag.
Exit codes: 0 success (with --detailed-exitcode: and no changes), 1 error, 2 the plan has changes.
`;

/** `--help`: every command and option; `reconcile COMMAND --help`: that command's options. */
function helpText(command?: CommandName): string {
  const lines = Object.entries(OPTIONS).filter(([name]) => command === undefined || commandTakes(command, name)).map(([name, spec]) => {
    const flag = `--${name}${spec.type === 'string' ? ` ${spec.placeholder ?? 'VALUE'}` : ''}`;
    const extra = [spec.env ? `env ${spec.env}` : '', spec.default ? `default ${spec.default}` : ''].filter(Boolean).join('; ');
    return `  ${flag.padEnd(34)} ${spec.description}${extra ? ` (${extra})` : ''}`;
  });
  if (command !== undefined) return `Options of \`reconcile${command === 'reconcile' ? '' : ` ${command}`}\`:\n${lines.join('\n')}\n`;
  return `${USAGE}\nOptions:\n${lines.join('\n')}\n`;
}

/**
 * A flag the command does not read is refused (an environment variable is not: several
 * commands share them). The option table names each option's commands.
 */
function flagProblem(command: CommandName, flags: ReadonlySet<string>): string | undefined {
  const foreign = [...flags].filter((name) => !commandTakes(command, name));
  if (foreign.length === 0) return undefined;
  const words = `reconcile${command === 'reconcile' ? '' : ` ${command}`}`;
  const others = COMMAND_NAMES.filter((other) => foreign.every((name) => commandTakes(other, name)));
  const where = others.length > 0 ? `; ${foreign.length === 1 ? 'it is' : 'they are'} an option of ${others.map((other) => `\`reconcile${other === 'reconcile' ? '' : ` ${other}`}\``).join(', ')}` : '';
  return `\`${words}\` has no option ${foreign.map((name) => `--${name}`).join(', ')}${where} (\`${words} --help\` lists its options)`;
}

/** node:util's message, or for an unknown option a short one with the nearest option (it names the option). */
function usageMessage(error: unknown): string {
  const message = (error as Error).message;
  const match = /^Unknown option '(--?[^']+)'/.exec(message);
  if (!match) return message;
  const hint = nearest(match[1]!.replace(/^-+/, ''), Object.keys(OPTIONS));
  return `unknown option ${match[1]}${hint === undefined ? '' : `; did you mean --${hint}?`}`;
}

/**
 * A first positional that is no directory but close to a command word is a mistyped command
 * (`reconcile valdate`): say so, rather than failing later on a missing manifests directory.
 */
function commandSuggestion(command: string, positionals: readonly string[], cwd: string): string | undefined {
  const word = positionals[0];
  if (command !== 'reconcile' || word === undefined || existsSync(resolve(cwd, word))) return undefined;
  const hint = nearest(word, Object.keys(COMMANDS));
  return hint === undefined ? undefined : `unknown command \`${word}\` (and no such directory); did you mean \`${hint}\`?`;
}

/** Parses argv: flags win over environment variables, which win over defaults. */
export function parseCommandLine(
  argv: string[],
  env: NodeJS.ProcessEnv,
): { command: CommandName; positionals: string[]; values: ParsedValues; lists: ParsedLists; flags: ReadonlySet<string> } {
  const parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: Object.fromEntries(
      Object.entries(OPTIONS).map(([name, spec]) => [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}), ...(spec.multiple ? { multiple: true } : {}) }]),
    ),
  });
  const values: ParsedValues = {};
  const lists: ParsedLists = {};
  const flags = new Set(Object.keys(parsed.values));
  for (const [name, spec] of Object.entries(OPTIONS)) {
    if (spec.multiple) {
      lists[name] = ((parsed.values as Record<string, string[] | undefined>)[name] ?? []).slice();
      continue;
    }
    const given = (parsed.values as ParsedValues)[name];
    if (given !== undefined) values[name] = given;
    else if (spec.env && env[spec.env] !== undefined && env[spec.env] !== '') values[name] = env[spec.env];
    else if (spec.default !== undefined) values[name] = spec.type === 'boolean' ? spec.default === 'true' : spec.default;
  }
  let positionals = parsed.positionals;
  let command: CommandName = 'reconcile';
  if (positionals[0] && positionals[0] in COMMANDS && positionals[0] !== 'reconcile') {
    command = positionals[0] as CommandName;
    positionals = positionals.slice(1);
  }
  return { command, positionals, values, lists, flags };
}

/** A command line the command cannot run: the one problem, and where the usage is (not the usage itself). */
function usageProblem(message: string): string {
  return `reconcile: ${message}\nreconcile: \`reconcile --help\` lists every command and option\n`;
}

export async function main(argv: string[], io: Partial<Pick<CommandContext, 'stdout' | 'stderr' | 'stdin' | 'env' | 'cwd'>> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv, env);
  } catch (error) {
    stderr.write(usageProblem(usageMessage(error)));
    return 1;
  }
  if (parsed.values.help) {
    // `reconcile --help` is the whole usage; `reconcile COMMAND --help` the command's options.
    stdout.write(helpText(parsed.command === 'reconcile' ? undefined : parsed.command));
    return 0;
  }
  const logProblem = logOptionProblem(parsed);
  if (logProblem !== undefined) {
    stderr.write(`reconcile: ${logProblem}\n`);
    return 1;
  }
  const cwd = io.cwd ?? process.cwd();
  const unknownCommand = commandSuggestion(parsed.command, parsed.positionals, cwd);
  if (unknownCommand) {
    stderr.write(`reconcile: ${unknownCommand}\n`);
    return 1;
  }
  if (parsed.values.version) {
    stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const foreign = flagProblem(parsed.command, parsed.flags);
  if (foreign !== undefined) {
    stderr.write(usageProblem(foreign));
    return 1;
  }
  // Every option is parsed and validated here, once; the commands read the typed value.
  let settings: Settings;
  try {
    settings = parseSettings({ ...parsed, env, cwd });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderr.write(usageProblem(error.message));
    return 1;
  }
  // The state directory belongs to the manifests directory; a state at its old default place is moved or used, never replaced.
  try {
    const writes = (parsed.command === 'reconcile' && (settings.watch || !settings.dryRun)) || parsed.command === 'apply';
    // The sandbox keeps its own state (a temporary directory unless --state-dir is given).
    const place = settings.sandbox ? { stateDir: settings.stateDir } : await settleStateDir(settings, writes);
    if (place.stateDir !== settings.stateDir) settings = { ...settings, stateDir: place.stateDir };
    if (place.note) stderr.write(`reconcile: ${place.note}\n`);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderr.write(`reconcile: ${error.message}\n`);
    return 1;
  }
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(new Error(`received ${signal}`));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const stopWatchingParent = watchParent(env, () => controller.abort(new Error('the parent process exited')));
  try {
    return await runCommand(parsed.command, settings, {
      positionals: parsed.positionals,
      env,
      cwd,
      stdout,
      stderr,
      ...(io.stdin ? { stdin: io.stdin } : {}),
      signal: controller.signal,
    });
  } catch (error) {
    if (error instanceof UsageError) {
      stderr.write(usageProblem(error.message));
      return 1;
    }
    throw error;
  } finally {
    stopWatchingParent();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** Runs a command with the settings of its own options. */
async function runCommand<C extends CommandName>(command: C, settings: Settings, context: Omit<CommandContext, 'settings'>): Promise<number> {
  const handler = (await COMMANDS[command]()) as (context: ContextOf<C>) => Promise<number>;
  return handler({ ...context, settings: settingsFor(command, settings) });
}

/**
 * Started by npm (`npx reconcile ...` or a package script), the command runs as npm → sh → node.
 * A SIGTERM to npm (`kill $!` of a background `npx reconcile emulator &`) reaches the shell,
 * which dies without passing it on, and the command would keep running with its port. So,
 * under npm only, the command stops as on SIGTERM when its parent process goes away (it is
 * then re-parented). Elsewhere (a container's PID 1 chain, a service manager, a plain shell)
 * signals reach it directly and nothing is watched.
 */
function watchParent(env: NodeJS.ProcessEnv, onGone: () => void): () => void {
  if (env.npm_lifecycle_event === undefined) return () => undefined;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, 250);
  timer.unref();
  return () => clearInterval(timer);
}
