import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../../src/cli/options.js';

const commands = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');
const optionRows = commands.split('\n').filter((line) => line.startsWith('| `--') || line.startsWith('| (never'));

describe('docs/commands.md options table', () => {
  it('has a row for every option of the command line', () => {
    const missing = Object.keys(OPTIONS).filter((name) => !optionRows.some((row) => row.startsWith(`| \`--${name}`) || row.includes(`, \`--${name}`)));
    expect(missing).toEqual([]);
  });

  it("names every option's environment variable in that option's row", () => {
    const wrong = Object.entries(OPTIONS)
      .filter(([, option]) => option.env !== undefined)
      .filter(([name, option]) => !optionRows.some((row) => (row.startsWith(`| \`--${name}`) || row.includes(`, \`--${name}`)) && row.includes(`\`${option.env}\``)))
      .map(([name]) => name);
    expect(wrong).toEqual([]);
  });
});
