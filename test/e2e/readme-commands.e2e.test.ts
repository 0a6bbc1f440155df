// The README's commands, read from the README itself and run through the built command as a
// user runs them: every line of its ```sh blocks, and each row of its "Three ways to run it"
// table (DIR being examples/, against the sandbox). What a fresh clone needs (`npm ci`, `npm
// test`) is run by the newcomer test on a clone, which this test checks it does; the daemon row
// is run by the sandbox daemon test. A command the README gains that no test runs fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO, assertBuilt, runCli } from './helpers/cli.js';

const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** Every command of the README's sh blocks: `&&` splits a line, `#` starts a comment. */
function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      const code = line.replace(/\s+#.*$/, '').trim();
      if (code) commands.push(...code.split('&&').map((part) => part.trim()));
    }
  }
  return commands;
}

/** The first column's command of each row of the "Three ways to run it" table. */
function tableCommands(markdown: string): Array<{ mode: string; command: string }> {
  const section = markdown.slice(markdown.indexOf('## Three ways to run it'), markdown.indexOf('## Documentation'));
  return [...section.matchAll(/^\| (\S[^|]*?) \| `([^`]+)` \|/gm)].map((m) => ({ mode: m[1]!, command: m[2]! }));
}

/** Tests that run, on a fresh clone, what the README's set-up commands do. */
const CLONE_TESTS: Record<string, { file: string; runs: string }> = {
  'npm ci': { file: 'test/e2e/newcomer.e2e.test.ts', runs: "'npm ci --prefer-offline --no-audit --no-fund && npx reconcile examples --sandbox'" },
  // npm test is the whole suite; its first step (the build) is what a second npx must survive.
  'npm test': { file: 'test/e2e/newcomer.e2e.test.ts', runs: "sh('npm run build', clone)" },
};
/** Rows of the table run elsewhere, and why. */
const RUN_ELSEWHERE: Record<string, string> = {
  'reconcile DIR --watch': 'test/daemon/sandbox-watch.e2e.test.ts',
};

beforeAll(() => assertBuilt());

describe('the README\'s commands', () => {
  const commands = shellCommands(README);
  const table = tableCommands(README);

  it('are found: the quick start block and the three ways to run it', () => {
    expect(commands).toContain('npx reconcile examples --sandbox');
    expect(table.map((row) => row.mode)).toEqual(['CI, on a pull request', 'once', 'daemon']);
  });

  for (const command of shellCommands(README)) {
    if (command.startsWith('npx reconcile ')) {
      it(`\`${command}\` runs and succeeds`, async () => {
        const run = await runCli(command.slice('npx reconcile '.length).split(/\s+/), {});
        expect(run.code, run.stderr.slice(-2000)).toBe(0);
        expect(run.stdout).toContain('Result: success');
      }, 120_000);
    } else {
      it(`\`${command}\` is run on a fresh clone by ${CLONE_TESTS[command]?.file ?? '(no test)'}`, () => {
        const covered = CLONE_TESTS[command];
        expect(covered, `no test runs \`${command}\``).toBeDefined();
        expect(readFileSync(join(REPO, covered!.file), 'utf8')).toContain(covered!.runs);
      });
    }
  }

  for (const { mode, command } of tableCommands(README)) {
    const elsewhere = RUN_ELSEWHERE[command];
    if (elsewhere) {
      it(`the ${mode} row (\`${command}\`) is run by ${elsewhere}`, () => {
        expect(readFileSync(join(REPO, elsewhere), 'utf8')).toContain("'--watch', '--sandbox'");
      });
      continue;
    }
    it(`the ${mode} row (\`${command}\`) runs on examples/ against the sandbox and does what the row says`, async () => {
      const args = command.split(/\s+/).slice(1).map((arg) => (arg === 'DIR' ? 'examples' : arg));
      const run = await runCli([...args, '--sandbox'], {});
      if (args.includes('--dry-run')) {
        // The plan as a PR comment; exit 2 when the fleet would change (the sandbox starts empty).
        expect(run.code, run.stderr.slice(-2000)).toBe(2);
        expect(run.stdout).toMatch(/^\*\*Plan: \d+ to create/m);
        expect(run.stdout).toContain('Apply forecast: ');
      } else {
        // One pass: observe, plan, apply, verify; it does not ask in the sandbox.
        expect(run.code, run.stderr.slice(-2000)).toBe(0);
        expect(run.stdout).toMatch(/^Apply: \d+ succeeded, 0 failed, 0 skipped\.$/m);
        expect(run.stdout).toMatch(/^Read back the writes of \d+ projects: \d+ confirmed\.$/m);
        expect(run.stderr).not.toContain('Apply these changes?');
      }
    }, 120_000);
  }
});
