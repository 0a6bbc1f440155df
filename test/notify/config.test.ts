import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/main.js';
import { NOTIFICATION_METRIC_DEFINITIONS } from '../../src/daemon/metrics.js';
import { parseNotifications, receiversFromUrls } from '../../src/notify/config.js';
import { dedupKey, eventsFromPass, scrubMessage } from '../../src/notify/events.js';
import { passResult } from '../daemon/fixtures.js';

const VALID = `apiVersion: reconciler/v1
kind: Notifications
dedupWindow: 30m
receivers:
  - name: ops
    type: webhook
    url: https://hooks.example.com/x
    secret: {env: HOOK_SECRET}
    events: [revision_applied]
  - name: commits
    type: github
    repository: acme/fleet
    apiUrl: https://github.example.com/api/v3/
    token: {file: /run/token}
    retries: 0
`;

describe('the notifications file', () => {
  it('parses receivers with their defaults', () => {
    const settings = parseNotifications(VALID, 'n.yaml');
    expect(settings.dedupWindowMs).toBe(30 * 60_000);
    expect(settings.receivers.map((r) => [r.name, r.type, r.retries, r.timeoutMs, r.queueSize])).toEqual([
      ['ops', 'webhook', 3, 10_000, 100],
      ['commits', 'github', 0, 10_000, 100],
    ]);
    expect(settings.receivers[1]).toMatchObject({ apiUrl: 'https://github.example.com/api/v3', context: 'fleet-reconciler' });
  });

  it('refuses a secret written in the file, naming the file, line and field', () => {
    const text = VALID.replace('secret: {env: HOOK_SECRET}', 'secret: s3cr3t-value');
    expect(() => parseNotifications(text, 'n.yaml')).toThrow(/^n\.yaml:8:13: receivers\.0\.secret: must be a reference `\{env: NAME\}` or `\{file: PATH\}`/);
    try {
      parseNotifications(text, 'n.yaml');
    } catch (error) {
      expect((error as Error).message).not.toContain('s3cr3t-value');
    }
  });

  it('names an unknown field and a duplicate name', () => {
    expect(() => parseNotifications(VALID.replace('    retries: 0', '    retires: 0'), 'n.yaml')).toThrow(/^n\.yaml:15:5: receivers\.1\.retires: unknown field `retires`/);
    expect(() => parseNotifications(VALID.replace('name: commits', 'name: ops'), 'n.yaml')).toThrow(/^n\.yaml:10:11: receivers\.1\.name: receiver name `ops` is used twice/);
  });

  it('--notify: Slack by its host, other URLs are signed webhooks that need a key', () => {
    expect(parseCommandLine(['--watch', '--notify', 'https://a.example/h', '--notify', 'https://hooks.slack.com/services/T/B/X'], {}).lists.notify).toHaveLength(2);
    expect(() => receiversFromUrls(['https://a.example/h'], {})).toThrow(/RECONCILE_NOTIFY_SECRET_FILE/);
    const receivers = receiversFromUrls(['https://a.example/h', 'https://hooks.slack.com/services/T/B/X'], { RECONCILE_NOTIFY_SECRET: 'k' });
    expect(receivers.map((r) => [r.name, r.type])).toEqual([
      ['webhook-1', 'webhook'],
      ['slack-2', 'slack'],
    ]);
  });
});

describe('events', () => {
  it('scrub quoted values, long opaque strings, query strings and addresses from reasons', () => {
    expect(scrubMessage('value "hunter2" rejected for sec_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 by ops@example.com at https://x.example/a?token=t')).toBe(
      'value "…" rejected for … by …@… at https://x.example/a?…',
    );
  });

  it('a write pass gives revision_applied with counts, and one event per failure; keys ignore the message', () => {
    const events = eventsFromPass(passResult(), { priority: 'write', trigger: 'revision' }, 0);
    expect(events.map((e) => e.type)).toEqual(['revision_applied', 'resource_failed']);
    expect(events[0]).toMatchObject({ result: 'failed', counts: { created: 0, updated: 1, failed: 1 } });
    const other = { ...events[1]!, reason: 'TransientError: answered 502' };
    expect(dedupKey(other)).toBe(dedupKey(events[1]!));
    expect(dedupKey({ ...events[1]!, revision: 'b'.repeat(40) })).not.toBe(dedupKey(events[1]!));
  });

  it('a pass of a rollout adds its events: names, ids and field paths, a scrubbed reason, never a value', async () => {
    const { summaryLine } = await import('../../src/notify/receivers.js');
    const rollout = {
      name: 'tenants',
      revision: 'a'.repeat(40),
      waves: [],
      waiting: [],
      revisions: {},
      events: [
        { type: 'rollout_halted' as const, rollout: 'tenants', revision: 'a'.repeat(40), wave: 'canary', reason: 'ProjectAuth/shop/auth failed: value "hunter2" rejected' },
        { type: 'approval_needed' as const, rollout: 'tenants', revision: 'a'.repeat(40), entries: ['ProjectAuth/shop/auth update (auth.jwt_exp)'], projects: ['shop'] },
      ],
    };
    const events = eventsFromPass(passResult({ rollout }), { priority: 'drift', trigger: 'resync' }, 0);
    const halted = events.find((e) => e.type === 'rollout_halted')!;
    expect(halted).toMatchObject({ rollout: 'tenants', wave: 'canary', reason: 'ProjectAuth/shop/auth failed: value "…" rejected' });
    expect(summaryLine(halted)).toBe('rollout tenants halted at wave canary (aaaaaaaaaaaa): ProjectAuth/shop/auth failed: value "…" rejected; later waves wait for `reconcile resume` or a newer revision');
    const needed = events.find((e) => e.type === 'approval_needed')!;
    expect(summaryLine(needed)).toBe('approval needed for aaaaaaaaaaaa (reconcile approve --revision aaaaaaaaaaaa): 1 change: ProjectAuth/shop/auth update (auth.jwt_exp)');
    expect(dedupKey(needed)).not.toBe(dedupKey(halted));
  });

  it('the notification metrics are documented with their types and labels', async () => {
    const doc = await readFile(new URL('../../docs/notifications-and-triggers.md', import.meta.url), 'utf8');
    for (const [name, definition] of Object.entries(NOTIFICATION_METRIC_DEFINITIONS)) {
      expect(doc).toContain(`| \`${name}\` | ${definition.type} | ${definition.labels.map((l) => `\`${l}\``).join(', ')}`);
    }
  });
});
