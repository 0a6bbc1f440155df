// Reads the Dockerfile and performs its build steps without a container engine: each stage
// is a directory, COPY copies (from the build context, filtered by .dockerignore, or from an
// earlier stage), RUN executes the npm steps for real and checks that every other step is
// one this file knows how to stand in for. What a base image provides (Node, npm, the
// Debian packages a RUN installs) comes from the machine and is reported, not faked.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, posix } from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Instructions with continuation lines joined and comments dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      i++;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue;
      line = line.replace(/\\\s*$/, ' ') + next;
    }
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) throw new Error(`Dockerfile line ${start + 1}: cannot read "${line}"`);
    instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: start + 1 });
  }
  return instructions;
}

/** `KEY=value KEY2="x y"` pairs (ENV, LABEL, ARG). */
export function parsePairs(args: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const m of args.matchAll(/([A-Za-z0-9_.-]+)(?:=("(?:[^"\\]|\\.)*"|\S*))?/g)) {
    const raw = m[2] ?? '';
    pairs[m[1]!] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return pairs;
}

export function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, a: string, b: string) => vars[a ?? b] ?? whole);
}

export interface Stage {
  name: string;
  base: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  args: Record<string, string>;
  labels: Record<string, string>;
  volumes: string[];
  exposed: string[];
  user?: string;
  entrypoint?: string[];
  cmd?: string[];
  /** What RUN did, step by step (for the report and for assertions). */
  steps: { command: string; performed: 'executed' | 'system-package' | 'user' | 'directory'; detail?: string }[];
  /** Paths created with an owner other than root (image path -> uid:gid). */
  owned: Map<string, string>;
}

export interface BuildOptions {
  dockerfile: string;
  context: string;
  workDir: string;
  /** PATH for RUN steps (first entry: the Node the base image provides). */
  path: string;
  /** Build arguments (`--build-arg`). */
  buildArgs?: Record<string, string>;
  log?: (line: string) => void;
}

/**
 * A .dockerignore pattern as a regular expression, with Docker's (Go's filepath.Match) rules:
 * `*` and `?` never cross a `/` but do match a leading dot; `**` matches any number of
 * directories, none included.
 */
export function dockerGlob(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      source += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i);
      source += pattern.slice(i, end + 1).replace(/^\[!/, '[^');
      i = end;
    } else source += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The files of the build context after .dockerignore (Docker's rules: last match wins). */
export function contextFiles(context: string, files: string[]): string[] {
  const ignoreFile = join(context, '.dockerignore');
  const patterns = existsSync(ignoreFile)
    ? readFileSync(ignoreFile, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => ({ negate: l.startsWith('!'), glob: dockerGlob(posix.normalize(l.replace(/^!/, '').replace(/^\//, '')).replace(/\/$/, '')) }))
    : [];
  return files.filter((file) => {
    let included = true;
    const parts = file.split('/');
    for (const pattern of patterns) {
      // A pattern matching a parent directory matches everything under it.
      const hit = parts.some((_, index) => pattern.glob.test(parts.slice(0, index + 1).join('/')));
      if (hit) included = pattern.negate;
    }
    return included;
  });
}

function exec(args: string): string[] {
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`expected the exec (JSON array) form: ${args}`);
  return parsed as string[];
}

function splitWords(command: string): string[] {
  return command.trim().split(/\s+/).filter(Boolean);
}

/** Builds every stage; returns them in order (the last is the image). */
export function build(options: BuildOptions): Stage[] {
  const log = options.log ?? (() => undefined);
  const instructions = parseDockerfile(readFileSync(options.dockerfile, 'utf8'));
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  const stageRoot = (name: string) => {
    const found = stages.find((s) => s.name === name);
    if (!found) throw new Error(`COPY --from=${name}: no such stage`);
    return found;
  };
  const inImage = (s: Stage, path: string) => join(s.root, isAbsolute(path) ? path : posix.join(s.workdir, path));

  for (const instruction of instructions) {
    const where = `Dockerfile line ${instruction.line}`;
    // As the engine does: arguments declared before the first FROM are seen by FROM lines
    // only; a stage sees its own ARGs (an `ARG NAME` without a value takes the global default)
    // and ENVs.
    const vars = instruction.keyword === 'FROM' || !stage ? globalArgs : { ...stage.args, ...stage.env };
    const args = substitute(instruction.args, vars);
    switch (instruction.keyword) {
      case 'ARG': {
        const pairs = parsePairs(instruction.args);
        for (const [key, value] of Object.entries(pairs)) {
          const resolved = options.buildArgs?.[key] ?? (value !== '' ? substitute(value, vars) : globalArgs[key] ?? '');
          if (stage) stage.args[key] = resolved;
          else globalArgs[key] = resolved;
        }
        break;
      }
      case 'FROM': {
        const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
        if (!m) throw new Error(`${where}: cannot read FROM ${args}`);
        const name = m[2] ?? `stage-${stages.length}`;
        const root = join(options.workDir, 'stages', name);
        mkdirSync(root, { recursive: true });
        const previous = stages.find((s) => s.name === m[1]);
        if (previous) cpSync(previous.root, root, { recursive: true, verbatimSymlinks: true });
        stage = { name, base: m[1]!, root, workdir: '/', env: {}, args: {}, labels: {}, volumes: [], exposed: [], steps: [], owned: new Map() };
        stages.push(stage);
        log(`stage ${name} from ${m[1]}`);
        break;
      }
      case 'WORKDIR':
        if (!stage) throw new Error(`${where}: WORKDIR before FROM`);
        stage.workdir = posix.resolve(stage.workdir, args);
        mkdirSync(join(stage.root, stage.workdir), { recursive: true });
        break;
      case 'ENV':
        Object.assign(stage!.env, Object.fromEntries(Object.entries(parsePairs(instruction.args)).map(([k, v]) => [k, substitute(v, vars)])));
        break;
      case 'LABEL':
        Object.assign(stage!.labels, Object.fromEntries(Object.entries(parsePairs(instruction.args)).map(([k, v]) => [k, substitute(v, vars)])));
        break;
      case 'VOLUME':
        stage!.volumes.push(...(args.startsWith('[') ? exec(args) : splitWords(args)));
        break;
      case 'EXPOSE':
        stage!.exposed.push(...splitWords(args));
        break;
      case 'USER':
        stage!.user = args;
        break;
      case 'ENTRYPOINT':
        stage!.entrypoint = exec(args);
        break;
      case 'CMD':
        stage!.cmd = exec(args);
        break;
      case 'COPY': {
        const words = splitWords(args);
        const flags = Object.fromEntries(words.filter((w) => w.startsWith('--')).map((w) => w.slice(2).split('=') as [string, string]));
        const paths = words.filter((w) => !w.startsWith('--'));
        const dest = paths.pop()!;
        const from = flags.from ? stageRoot(flags.from) : undefined;
        for (const source of paths) {
          const sourcePath = from ? inImage(from, source) : join(options.context, source);
          if (!existsSync(sourcePath)) throw new Error(`${where}: COPY source ${source} not found${from ? ` in stage ${from.name}` : ' in the build context'}`);
          const isDir = statSync(sourcePath).isDirectory();
          const target = inImage(stage!, dest.endsWith('/') && !isDir ? posix.join(dest, posix.basename(source)) : dest);
          mkdirSync(isDir ? target : dirname(target), { recursive: true });
          cpSync(sourcePath, target, { recursive: true, verbatimSymlinks: true });
          if (flags.chmod) chmodSync(target, Number.parseInt(flags.chmod, 8));
          if (flags.chown) stage!.owned.set(isAbsolute(dest) ? dest : posix.join(stage!.workdir, dest), flags.chown);
        }
        break;
      }
      case 'RUN':
        runStep(stage!, args, options, where, log);
        break;
      case 'HEALTHCHECK':
      case 'STOPSIGNAL':
      case 'SHELL':
        break;
      default:
        throw new Error(`${where}: ${instruction.keyword} is not supported by this build`);
    }
  }
  return stages;
}

function runStep(stage: Stage, command: string, options: BuildOptions, where: string, log: (line: string) => void): void {
  // BuildKit's cache mounts (`--mount=type=cache,...`) only speed builds up: the steps run
  // with this machine's npm cache instead.
  let rest = command.trim();
  for (let flag = /^--mount=\S+\s+/.exec(rest); flag; flag = /^--mount=\S+\s+/.exec(rest)) {
    if (!flag[0].startsWith('--mount=type=cache,')) throw new Error(`${where}: RUN ${flag[0].trim()} is not supported by this build`);
    rest = rest.slice(flag[0].length);
  }
  for (const part of rest.split('&&').map((p) => p.trim())) {
    const words = splitWords(part);
    const [program, ...rest] = words;
    if (program === 'npm') {
      log(`${stage.name}: ${part}`);
      execFileSync('sh', ['-c', part], {
        cwd: join(stage.root, stage.workdir),
        env: { ...process.env, ...stage.env, PATH: options.path, npm_config_update_notifier: 'false' },
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 64 * 1024 * 1024,
      });
      stage.steps.push({ command: part, performed: 'executed' });
    } else if (program === 'tar') {
      // The base image's tar, on files of the stage's working directory only.
      if (rest.some((w) => w.startsWith('/') || w.includes('..'))) throw new Error(`${where}: RUN ${part}: tar may only work below the working directory here`);
      log(`${stage.name}: ${part}`);
      execFileSync('sh', ['-c', part], { cwd: join(stage.root, stage.workdir), env: { PATH: options.path }, stdio: ['ignore', 'pipe', 'pipe'] });
      stage.steps.push({ command: part, performed: 'executed' });
    } else if (program === 'apt-get' || (program === 'rm' && rest.join(' ') === '-rf /var/lib/apt/lists/*')) {
      // Debian packages of the base image: recorded, and checked by the test (tini only).
      const install = rest[0] === 'install' ? rest.filter((w) => !w.startsWith('-') && w !== 'install') : [];
      stage.steps.push({ command: part, performed: 'system-package', detail: install.join(' ') });
    } else if (program === 'groupadd' || program === 'useradd') {
      stage.steps.push({ command: part, performed: 'user', detail: part });
    } else if (program === 'install' && rest.includes('-d')) {
      const value = (flag: string) => rest[rest.indexOf(flag) + 1];
      const path = rest[rest.length - 1]!;
      const target = join(stage.root, path);
      mkdirSync(target, { recursive: true });
      if (rest.includes('-m')) chmodSync(target, Number.parseInt(value('-m')!, 8));
      if (rest.includes('-o')) stage.owned.set(path, `${value('-o')}:${value('-g') ?? value('-o')}`);
      stage.steps.push({ command: part, performed: 'directory', detail: path });
    } else {
      throw new Error(`${where}: RUN step "${part}" is not one the engine-free build knows; teach test/deploy/dockerfile.ts`);
    }
  }
}

/** Applies recorded owners for real (only possible as root). */
export function applyOwners(stage: Stage): void {
  if (process.getuid?.() !== 0) return;
  for (const [path, owner] of stage.owned) {
    const [uid, gid] = owner.split(':').map(Number);
    chownSync(join(stage.root, path), uid!, gid ?? uid!);
  }
}

export function gitFiles(repo: string): string[] {
  const out = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (out.status !== 0) throw new Error(`git ls-files failed: ${out.stderr}`);
  return out.stdout.split('\0').filter((f) => f !== '' && existsSync(join(repo, f)));
}
