import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main, parseCommandLine } from '../../src/cli/main.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = capture();
  const stderr = capture();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env, cwd: process.cwd() });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('command line', () => {
  it('takes flags over environment variables over defaults, and knows which were flags', () => {
    const fromEnv = parseCommandLine(['validate', 'dir'], { RECONCILE_RATE_LIMIT: '10/1s' });
    expect(fromEnv).toMatchObject({ command: 'validate', positionals: ['dir'] });
    expect(fromEnv.values['rate-limit']).toBe('10/1s');
    expect(fromEnv.flags.has('rate-limit')).toBe(false);
    const fromFlag = parseCommandLine(['--rate-limit', '5/1s'], { RECONCILE_RATE_LIMIT: '10/1s' });
    expect(fromFlag).toMatchObject({ command: 'reconcile', positionals: [] });
    expect(fromFlag.values['rate-limit']).toBe('5/1s');
    expect(fromFlag.flags.has('rate-limit')).toBe(true);
    // No default in the table: the budget's default depends on the command (see api-session.ts).
    expect(parseCommandLine([], {}).values['rate-limit']).toBeUndefined();
  });

  it("refuses a flag the command does not read, naming the commands that have it; an environment variable is not refused", async () => {
    const validate = await run(['validate', 'examples', '--dry-run']);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('reconcile: `reconcile validate` has no option --dry-run; it is an option of `reconcile` (`reconcile validate --help` lists its options)\n');
    const apply = await run(['apply', 'plan.json', '--watch']);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain('`reconcile apply` has no option --watch');
    const emulator = await run(['--port', '1234', 'examples']);
    expect(emulator.stderr).toContain('`reconcile` has no option --port; it is an option of `reconcile emulator`');
    const fromEnv = await run(['validate', 'examples'], { RECONCILE_RESYNC: 'continuous' });
    expect(fromEnv.code).toBe(0);
  });

  it('prints the options of one command with `reconcile COMMAND --help`', async () => {
    const help = await run(['emulator', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Options of `reconcile emulator`:\n/);
    expect(help.stdout).toContain('--port PORT');
    expect(help.stdout).not.toContain('--dry-run');
    const all = await run(['--help']);
    expect(all.stdout).toContain('Usage:');
    expect(all.stdout).toContain('--port PORT');
  });

  it('refuses an unknown log level before doing anything, naming where it came from', async () => {
    const flag = await run(['validate', 'examples', '--log-level', 'bogus']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe('reconcile: Expected --log-level to be one of trace, debug, info, warn, error, fatal, silent, got `bogus`\n');
    const env = await run(['validate', 'examples'], { RECONCILE_LOG_LEVEL: 'loud' });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('Expected RECONCILE_LOG_LEVEL to be one of');
  });

  it('refuses an unknown option in one line, with a pointer to --help instead of the usage', async () => {
    const result = await run(['--no-such-flag']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('reconcile: unknown option --no-such-flag\nreconcile: `reconcile --help` lists every command and option\n');
  });

  it('refuses a command missing what it needs in one line and the hint, not the usage text', async () => {
    const result = await run(['approve', '--revision', '3f2c9a1b7d4e'], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'reconcile: approve: set --trigger-token-file PATH (or RECONCILE_TRIGGER_TOKEN_FILE) to the token the daemon was started with\n' +
        'reconcile: `reconcile --help` lists every command and option\n',
    );
  });

  it('suggests the option or command a typo was close to, once', async () => {
    const flag = await run(['--dry-rn']);
    expect(flag.code).toBe(1);
    expect(flag.stderr.split('\n')[0]).toBe('reconcile: unknown option --dry-rn; did you mean --dry-run?');
    expect(flag.stderr.match(/did you mean/g)).toHaveLength(1);
    const inline = await run(['--log-levl=debug']);
    expect(inline.stderr.split('\n')[0]).toBe('reconcile: unknown option --log-levl; did you mean --log-level?');
    const command = await run(['valdate', 'examples']);
    expect(command.code).toBe(1);
    expect(command.stderr).toBe('reconcile: unknown command `valdate` (and no such directory); did you mean `validate`?\n');
    // A directory of that name is a manifests directory, whatever it looks like.
    const directory = await run(['examples', '--version']);
    expect(directory.code).toBe(0);
    expect(directory.stderr).toBe('');
  });

  it('checks --log-format and RECONCILE_LOG_FORMAT up front', async () => {
    const flag = await run(['validate', 'examples', '--log-format', 'fancy']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe('reconcile: Expected --log-format to be one of json, pretty, got `fancy`\n');
    const env = await run(['validate', 'examples'], { RECONCILE_LOG_FORMAT: 'xml' });
    expect(env.stderr).toContain('Expected RECONCILE_LOG_FORMAT to be one of json, pretty');
  });

  it('prints help with every option and its environment variable', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    for (const text of ['--api-url URL', 'MANAGEMENT_API_URL', '--rate-limit N/DURATION', 'RECONCILE_RATE_LIMIT', '--http-timeout', '--observe']) {
      expect(result.stdout).toContain(text);
    }
  });
});
