import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/main.js';
import { OPTIONS } from '../../src/cli/options.js';
import { InvalidObserveListError, parseObserveList } from '../../src/daemon/observe-list.js';
import { observeReadsPerProject } from '../../src/daemon/observer.js';

const CHOICES = 'health, bans, api_keys, backups, readonly, upgrade (or `all`, or `none`)';

describe('parseObserveList (--observe)', () => {
  it('maps each word to the fact it reads, in a fixed order, duplicates collapsed', () => {
    expect(parseObserveList('health')).toEqual(['health']);
    expect(parseObserveList('upgrade,bans, health ,bans')).toEqual(['health', 'networkBans', 'upgrade']);
    expect(parseObserveList('api_keys,readonly,backups')).toEqual(['apiKeys', 'backups', 'readOnly']);
    expect(parseObserveList('BANS')).toEqual(['networkBans']);
  });

  it('`all` reads the six facts, `none` reads nothing', () => {
    expect(parseObserveList('all')).toEqual(['health', 'networkBans', 'apiKeys', 'backups', 'readOnly', 'upgrade']);
    expect(parseObserveList(' none ')).toEqual([]);
  });

  it('costs one request per fact and project', () => {
    expect(observeReadsPerProject(parseObserveList('all'))).toBe(6);
    expect(observeReadsPerProject(parseObserveList('health,health'))).toBe(1);
    expect(observeReadsPerProject(parseObserveList('none'))).toBe(0);
  });

  it.each([
    ['health,bogus', 'unknown item `bogus`'],
    ['keys,ban', 'unknown items `keys`, `ban`'],
    ['health,,bans', 'an item is empty'],
    ['health,', 'an item is empty'],
    ['', 'the list is empty (use `none` to read nothing)'],
    ['all,health', '`all` and `none` cannot be combined with other items'],
    ['none,all', '`all` and `none` cannot be combined with other items'],
  ])('rejects `%s` with an exact message', (value, detail) => {
    let thrown: unknown;
    try {
      parseObserveList(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidObserveListError);
    expect((thrown as Error).message).toBe(`Expected --observe to be a comma-separated list of ${CHOICES}, got \`${value}\`: ${detail}`);
  });

  it('is an option of the command line: flag over RECONCILE_OBSERVE over the default `health`', () => {
    expect(OPTIONS.observe).toMatchObject({ type: 'string', env: 'RECONCILE_OBSERVE', default: 'health' });
    expect(parseCommandLine(['--watch'], {}).values.observe).toBe('health');
    expect(parseCommandLine(['--watch'], { RECONCILE_OBSERVE: 'bans,backups' }).values.observe).toBe('bans,backups');
    expect(parseCommandLine(['--watch', '--observe', 'all'], { RECONCILE_OBSERVE: 'none' }).values.observe).toBe('all');
  });
});
