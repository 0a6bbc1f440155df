// The options' logging vocabulary without the logger: the levels are pino's, and reading them
// (as the command line does for every command) does not load pino.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { LOG_FORMATS, LOG_LEVELS, colorWanted } from '../../src/util/log-options.js';

/** Whether this process has loaded pino (a CommonJS package, in require's cache however it was loaded). */
const pinoLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => /[\\/]node_modules[\\/]pino[\\/]/.test(path));

describe('logging options', () => {
  it('are read without loading pino', () => {
    expect(LOG_FORMATS).toEqual(['json', 'pretty']);
    expect(colorWanted({ NO_COLOR: '1' }, true)).toBe(false);
    expect(pinoLoaded()).toBe(false);
  });

  it("name pino's levels, lowest first, and silent", async () => {
    const { pino } = await import('pino');
    expect(pinoLoaded()).toBe(true);
    expect(LOG_LEVELS).toEqual([...Object.entries(pino.levels.values).sort(([, a], [, b]) => a - b).map(([name]) => name), 'silent']);
  });
});
