import { describe, expect, it } from 'vitest';
import { dedupKey, eventFromBrokenRevision } from '../../src/notify/events.js';
import { parseNotifications } from '../../src/notify/config.js';
import { summaryLine } from '../../src/notify/receivers.js';

const CANARY = 'sk_live_CANARY_9f8e7d6c5b4a39281706';
const BROKEN = 'b'.repeat(40);
const GOOD = 'a'.repeat(40);

describe('the revision_broken event', () => {
  it('names each error by file, line and field, and the last good revision, never a value; told once per revision', () => {
    const errors = [
      { file: 'projects/shop.yaml', line: 7, column: 3, path: '/spec/auth/site_ur', message: `unknown field; value "${CANARY}"` },
      { file: 'projects/blog.yaml', line: 2, column: 1, path: '', message: 'a warning only', severity: 'warning' as const },
    ];
    const event = eventFromBrokenRevision({ revision: BROKEN, errors, lastGood: GOOD }, false, 1_000)!;
    expect(event).toMatchObject({ type: 'revision_broken', revision: BROKEN, lastGoodRevision: GOOD, trigger: 'revision', reason: '1 manifest error; revision aaaaaaaaaaaa stays applied' });
    expect(event.entries).toEqual(['projects/shop.yaml:7 /spec/auth/site_ur: unknown field; value "…"']);
    expect(summaryLine(event)).toBe('revision bbbbbbbbbbbb is broken: 1 manifest error; revision aaaaaaaaaaaa stays applied; nothing of it is applied: projects/shop.yaml:7 /spec/auth/site_ur: unknown field; value "…"');
    expect(JSON.stringify(event)).not.toContain(CANARY);
    expect(dedupKey(eventFromBrokenRevision({ revision: BROKEN, errors, lastGood: GOOD }, false, 2_000)!)).toBe(dedupKey(event));
    expect(dedupKey(eventFromBrokenRevision({ revision: 'c'.repeat(40), errors, lastGood: GOOD }, false, 2_000)!)).not.toBe(dedupKey(event));
    // A clean reading, or warnings only, gives none.
    expect(eventFromBrokenRevision({ revision: BROKEN, errors: [errors[1]!] }, false, 1_000)).toBeUndefined();
  });

  it('is an event a receiver may select', () => {
    const settings = parseNotifications('apiVersion: reconciler/v1\nkind: Notifications\nreceivers:\n  - name: ops\n    type: webhook\n    url: https://hooks.example.com/x\n    secret: {env: HOOK_SECRET}\n    events: [revision_broken]\n', 'n.yaml');
    expect([...settings.receivers[0]!.events!]).toEqual(['revision_broken']);
  });
});
