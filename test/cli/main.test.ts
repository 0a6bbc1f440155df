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

  it('refuses an unknown log level before doing anything, naming where it came from', async () => {
    const flag = await run(['validate', 'examples', '--log-level', 'bogus']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe('reconcile: Expected --log-level to be one of trace, debug, info, warn, error, fatal, silent, got `bogus`\n');
    const env = await run(['validate', 'examples'], { RECONCILE_LOG_LEVEL: 'loud' });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('Expected RECONCILE_LOG_LEVEL to be one of');
  });

  it('refuses an unknown option with the usage', async () => {
    const result = await run(['--no-such-flag']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Unknown option '--no-such-flag'");
    expect(result.stderr).toContain('Usage:');
  });

  it('prints help with every option and its environment variable', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    for (const text of ['--api-url URL', 'MANAGEMENT_API_URL', '--rate-limit N/DURATION', 'RECONCILE_RATE_LIMIT', '--http-timeout', '--observe']) {
      expect(result.stdout).toContain(text);
    }
  });
});
