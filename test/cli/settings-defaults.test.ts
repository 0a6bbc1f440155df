// Every default of the command line is written once, in the option table (src/cli/options.ts):
// the settings read it from there, whether main.ts filled it in or not.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/main.js';
import { COMMAND_NAMES, OPTIONS, commandTakes } from '../../src/cli/options.js';
import { parseSettings, settingsFor, SETTING_KEYS } from '../../src/cli/settings.js';
import { validateSchedule } from '../../src/daemon/schedule.js';

const SETTINGS_SOURCE = fileURLToPath(new URL('../../src/cli/settings.ts', import.meta.url));

describe('option defaults', () => {
  it('are the same settings whether the command line filled them in or not', () => {
    const cwd = '/work/repo';
    const filled = parseCommandLine([], {});
    const fromTable = parseSettings({ ...filled, env: {}, cwd });
    const bare = parseSettings({ values: {}, flags: new Set(), env: {}, cwd });
    expect(bare).toEqual(fromTable);
    // The table's defaults are what the settings hold.
    expect(fromTable.output).toBe(OPTIONS.output!.default);
    expect(fromTable.resync).toBe(OPTIONS.resync!.default);
    expect(fromTable.maxPlanAge.text).toBe(OPTIONS['max-plan-age']!.default);
    expect(fromTable.daemonUrl).toBe(OPTIONS['daemon-url']!.default);
    expect(fromTable.host).toBe(OPTIONS.host!.default);
    expect(String(fromTable.port)).toBe(OPTIONS.port!.default);
    expect(fromTable.statusPublic).toBe(false);
    expect(fromTable.metricsPerResource).toBe(true);
  });

  it('include a valid --resync schedule (the settings check only a schedule that was given)', () => {
    expect(() => validateSchedule(OPTIONS.resync!.default!)).not.toThrow();
    expect(() => parseSettings({ values: { resync: 'every ten minutes' }, flags: new Set(['resync']), env: {}, cwd: '/work/repo' })).toThrow(/Expected --resync to be a cron expression/);
  });

  it('follow a changed table (no second copy in the settings)', () => {
    const original = OPTIONS['trigger-interval']!.default;
    (OPTIONS['trigger-interval'] as { default?: string }).default = '45s';
    try {
      const settings = parseSettings({ values: {}, flags: new Set(), env: {}, cwd: '/work/repo' });
      expect(settings.triggerIntervalMs).toBe(45_000);
    } finally {
      (OPTIONS['trigger-interval'] as { default?: string }).default = original;
    }
  });

  it('are not written as literals in settings.ts', () => {
    const source = readFileSync(SETTINGS_SOURCE, 'utf8');
    // `?? 'literal'` after an option's value is a second copy of a default.
    const defaulted = (source.match(/text\([^,]+, '([a-z-]+)'\)\s*\?\?\s*['"`]/g) ?? []).filter((found) => {
      const name = /'([a-z-]+)'/.exec(found)![1]!;
      return OPTIONS[name]?.default !== undefined;
    });
    expect(defaulted).toEqual([]);
    for (const [name, spec] of Object.entries(OPTIONS)) {
      if (spec.default === undefined || spec.type === 'boolean' || ['true', 'false', '1', 'text'].includes(spec.default)) continue;
      expect(source.includes(`'${spec.default}'`), `--${name}'s default ${spec.default} is written in settings.ts`).toBe(false);
    }
  });
});

describe('settings per command', () => {
  const settings = parseSettings({ values: {}, flags: new Set(), env: {}, cwd: '/work/repo' });

  it('every setting belongs to an option of the table', () => {
    const owned = new Set(Object.values(SETTING_KEYS).flat());
    const full = parseSettings({ ...parseCommandLine(['--rate-limit', '5/1s', '--rate-model', 'user', '--token-file', 't', '--state-dir', 's', '--max-observation-age', '1m', '--log-format', 'json'], {}), env: {}, cwd: '/work/repo' });
    for (const key of Object.keys(full)) expect(owned.has(key as never), `the setting ${key} has no option in SETTING_KEYS`).toBe(true);
    expect(Object.keys(SETTING_KEYS).sort()).toEqual(Object.keys(OPTIONS).sort());
  });

  it('a command gets the settings of its own options, and no other', () => {
    const validate = settingsFor('validate', settings) as Record<string, unknown>;
    expect(validate).toHaveProperty('output');
    expect(validate).toHaveProperty('stateDir');
    expect(validate).not.toHaveProperty('lockTimeoutMs');
    expect(validate).not.toHaveProperty('resync');
    const emulator = settingsFor('emulator', settings) as Record<string, unknown>;
    expect(Object.keys(emulator).sort()).toEqual(['budget', 'help', 'host', 'logLevel', 'port', 'rateModel', 'speed', 'version']);
    for (const command of COMMAND_NAMES) {
      const keys = Object.keys(settingsFor(command, settings));
      const allowed = new Set(Object.entries(SETTING_KEYS).filter(([name]) => commandTakes(command, name)).flatMap(([, owned]) => owned as readonly string[]));
      expect(keys.filter((key) => !allowed.has(key)), command).toEqual([]);
    }
  });
});
