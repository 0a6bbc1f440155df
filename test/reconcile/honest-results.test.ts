// A write the service acknowledges but the read-back still shows as a difference fails the
// pass: in its result, in every output format and in the daemon's metrics.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/daemon/metrics.js';
import { makeEntry } from '../../src/reconcile/diff.js';
import { renderJson } from '../../src/reconcile/render/json.js';
import { renderMarkdown } from '../../src/reconcile/render/markdown.js';
import { renderText } from '../../src/reconcile/render/text.js';
import type { KindModule } from '../../src/reconcile/types.js';
import { ORG, project, startHarness, type Harness } from './helpers/fleet.js';

/** A kind whose writes are acknowledged and never take effect. */
const ignoredWrites: KindModule = {
  kind: 'ProjectRestapi',
  manages: () => true,
  async plan(scope) {
    const entry = makeEntry({ kind: 'ProjectRestapi', project: scope.name, name: 'restapi', changes: [{ path: 'restapi.max_rows', before: 100, after: 500 }] });
    return [entry];
  },
  // Acknowledged, never taking effect: the service is left as it was.
  apply: async () => undefined,
};

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ DB_PASS: 'honest-results-db-pass' });
});
afterEach(async () => {
  await h.close();
});

describe('a write that still differs after the apply', () => {
  it('fails the pass, is shown by every renderer, and is counted as failed in the metrics', async () => {
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop') });
    const result = await h.pass({ kinds: [ignoredWrites] });
    expect(result.result).toBe('failed');
    expect(result.outcomes).toContainEqual(
      expect.objectContaining({
        entryId: 'ProjectRestapi/shop/restapi',
        result: 'failed',
        error: { type: 'StillDiffersError', message: 'still differs after the apply (restapi.max_rows)' },
      }),
    );
    expect(result.resources.find((r) => r.id === 'ProjectRestapi/shop/restapi')).toMatchObject({ state: 'failed', message: 'still differs after the apply (restapi.max_rows)' });

    expect(renderText(result, { color: false })).toContain('x ProjectRestapi/shop/restapi failed: still differs after the apply (restapi.max_rows)');
    expect(renderMarkdown(result)).toContain('`ProjectRestapi/shop/restapi` failed: still differs after the apply');
    expect(JSON.parse(renderJson(result)).result).toBe('failed');

    const metrics = createMetrics();
    metrics.recordPass(result);
    const text = await metrics.registry.metrics();
    expect(text).toContain('reconciler_reconcile_total{result="failed"} 1');
    expect(text).toContain('reconciler_apply_total{kind="ProjectRestapi",action="update",result="failed"} 1');
  });
});
