// What a finished pass tells receivers: blocked changes in apply mode, nothing about a change the
// process's stop interrupted, Slack text that cannot ping or link, and a deduplication record that
// outlives the process.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/daemon/metrics.js';
import type { NotificationSettings } from '../../src/notify/config.js';
import { eventsFromPass, type NotificationEvent } from '../../src/notify/events.js';
import { DEDUP_STATE_FILE, Notifier } from '../../src/notify/notifier.js';
import { deliveryRequest, escapeSlack } from '../../src/notify/receivers.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { passResult } from '../daemon/fixtures.js';

const WRITE = { priority: 'write' as const, trigger: 'revision' as const };

describe('events of a writing pass', () => {
  it('a blocked change recorded as a skipped outcome is sent as change_blocked', () => {
    const result = passResult({
      plan: {
        entries: [{ id: 'Project/shop', kind: 'Project', name: 'shop', action: 'blocked', changes: [{ path: 'region', before: 'eu-west-1', after: 'us-east-1' }], reason: 'the region of an existing project cannot change' }],
        summary: { create: 0, update: 0, delete: 0, noop: 0, blocked: 1 },
        hasChanges: false,
      },
      outcomes: [{ entryId: 'Project/shop', kind: 'Project', action: 'blocked', result: 'skipped', error: { type: 'Blocked', message: 'the region of an existing project cannot change' } }],
    });
    const events = eventsFromPass(result, WRITE, 1);
    expect(events.map((event) => [event.type, event.resource, event.reason])).toEqual([
      ['revision_applied', undefined, undefined],
      ['change_blocked', 'Project/shop', 'the region of an existing project cannot change'],
    ]);
  });

  it('an interrupted pass sends no revision_applied and nothing for its interrupted change; its real failures still go out', () => {
    const result = passResult({
      interrupted: true,
      outcomes: [
        { entryId: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', action: 'update', result: 'interrupted', error: { type: 'Error', message: 'shutting down' } },
        { entryId: 'Secret/shop/STRIPE_KEY', kind: 'Secret', action: 'create', result: 'failed', error: { type: 'TransientError', message: 'answered 503' } },
      ],
    });
    const events = eventsFromPass(result, WRITE, 1);
    expect(events.map((event) => [event.type, event.resource])).toEqual([['resource_failed', 'Secret/shop/STRIPE_KEY']]);
  });
});

describe('the metrics of an interrupted pass', () => {
  it('count the interrupted change as interrupted, never failed, and the pass as interrupted', async () => {
    const metrics = createMetrics(undefined, { processMetrics: false });
    metrics.recordPass(
      passResult({
        interrupted: true,
        outcomes: [{ entryId: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', action: 'update', result: 'interrupted', error: { type: 'Error', message: 'drift re-checks stopped' } }],
      }),
    );
    const text = await metrics.render();
    expect(text).toMatch(/^reconciler_apply_total\{kind="ProjectAuth",action="update",result="interrupted"\} 1$/m);
    expect(text).not.toMatch(/^reconciler_apply_total\{[^}]*result="failed"\}/m);
    expect(text).toMatch(/^reconciler_reconcile_total\{result="interrupted"\} 1$/m);
    expect(text).toMatch(/^reconciler_reconcile_total\{result="failed"\} 0$/m);
  });
});

describe('Slack text', () => {
  it('escapes &, < and > so a name cannot ping the channel or carry a link', async () => {
    expect(escapeSlack('<!channel> & <https://evil.example|click>')).toBe('&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
    const event: NotificationEvent = { type: 'change_blocked', at: 1, trigger: 'revision', dryRun: false, resource: 'Project/<!channel>', action: 'blocked', reason: 'see <https://evil.example|here>' };
    const request = await deliveryRequest(
      { name: 'team', type: 'slack', url: { inline: 'https://hooks.slack.com/services/T/B/X' }, rate: { limit: 1, windowMs: 1 }, timeoutMs: 1, retries: 0, queueSize: 1 },
      event,
      'id',
      {},
    );
    const text = (JSON.parse(request.body) as { text: string }).text;
    expect(text).not.toMatch(/[<>]/);
    expect(text).toContain('Project/&lt;!channel&gt;');
  });
});

describe('the deduplication record', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reconciler-dedup-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const settings: NotificationSettings = {
    dedupWindowMs: 3_600_000,
    receivers: [{ name: 'ops', type: 'webhook', url: 'http://127.0.0.1:9/hook', secret: { env: 'S' }, rate: { limit: 100, windowMs: 60_000 }, timeoutMs: 1_000, retries: 0, queueSize: 100 }],
  };
  const failure: NotificationEvent = { type: 'resource_failed', at: 1, trigger: 'resync', dryRun: false, revision: 'abc1234', resource: 'ProjectAuth/shop/auth', action: 'update', reason: 'TransientError: answered 500' };

  async function process(clock: ManualClock, sent: string[]): Promise<Notifier> {
    const notifier = new Notifier({
      settings,
      clock,
      log: silentLogger,
      env: { S: 'secret' },
      send: async (request) => {
        sent.push(request.body);
        return 200;
      },
    });
    await notifier.restore(join(dir, DEDUP_STATE_FILE));
    return notifier;
  }

  it('survives restarts within the window and forgets after it', async () => {
    const clock = new ManualClock();
    const sent: string[] = [];
    for (let restart = 0; restart < 3; restart++) {
      const notifier = await process(clock, sent);
      notifier.publish([failure]);
      await notifier.idle();
      await notifier.close();
      await clock.advance(60_000);
    }
    expect(sent).toHaveLength(1);
    // A new revision's failure is another notification; past the window, the same one is sent again.
    const notifier = await process(clock, sent);
    notifier.publish([{ ...failure, revision: 'def5678' }]);
    await clock.advance(3_600_000);
    notifier.publish([failure]);
    await notifier.idle();
    await notifier.close();
    expect(sent).toHaveLength(3);
    const record = await readFile(join(dir, DEDUP_STATE_FILE), 'utf8');
    expect(record).not.toContain('shop');
  });

  it('starts empty from an unreadable record', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, DEDUP_STATE_FILE), '{not json');
    const sent: string[] = [];
    const notifier = await process(new ManualClock(), sent);
    notifier.publish([failure]);
    await notifier.idle();
    await notifier.close();
    expect(sent).toHaveLength(1);
  });
});
