// `--observe LIST`: which observed-only facts the daemon reads on each drift re-check. The
// user-facing words are short and stable; the reconciler's observation module names them its own way.
import type { ObservedResource } from '../reconcile/kinds/observed.js';

/** The words `--observe` accepts, in the order docs/operations.md lists them. */
const OBSERVE_CHOICES = ['health', 'bans', 'api_keys', 'backups', 'readonly', 'upgrade'] as const;
type ObserveChoice = (typeof OBSERVE_CHOICES)[number];

/** What one word reads (each is one request per project and re-check). */
const OBSERVED_RESOURCE_OF: Readonly<Record<ObserveChoice, ObservedResource>> = {
  health: 'health',
  bans: 'networkBans',
  api_keys: 'apiKeys',
  backups: 'backups',
  readonly: 'readOnly',
  upgrade: 'upgrade',
};

export class InvalidObserveListError extends Error {
  constructor(readonly value: string, detail: string) {
    super(`Expected --observe to be a comma-separated list of ${OBSERVE_CHOICES.join(', ')} (or \`all\`, or \`none\`), got \`${value}\`: ${detail}`);
    this.name = 'InvalidObserveListError';
  }
}

/**
 * Parses an `--observe` value into the resources to read, in a fixed order (duplicates collapse).
 * `all` and `none` stand alone. Throws InvalidObserveListError for anything else.
 */
export function parseObserveList(value: string): ObservedResource[] {
  const items = value.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) {
    throw new InvalidObserveListError(value, value.trim() === '' ? 'the list is empty (use `none` to read nothing)' : 'an item is empty');
  }
  const words = items.map((item) => item.toLowerCase());
  if (words.includes('all') || words.includes('none')) {
    if (words.length > 1) throw new InvalidObserveListError(value, '`all` and `none` cannot be combined with other items');
    return words[0] === 'all' ? OBSERVE_CHOICES.map((choice) => OBSERVED_RESOURCE_OF[choice]) : [];
  }
  const unknown = items.filter((_, index) => !(OBSERVE_CHOICES as readonly string[]).includes(words[index]!));
  if (unknown.length > 0) {
    throw new InvalidObserveListError(value, `unknown ${unknown.length === 1 ? 'item' : 'items'} ${unknown.map((item) => `\`${item}\``).join(', ')}`);
  }
  const wanted = new Set(words);
  return OBSERVE_CHOICES.filter((choice) => wanted.has(choice)).map((choice) => OBSERVED_RESOURCE_OF[choice]);
}
