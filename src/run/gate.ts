// A one-shot apply's wait at a rollout's gate: the end of the current wave's soak.
import type { Logger, PassResult } from '../reconcile/types.js';
import type { Clock } from '../util/clock.js';
import { formatElapsed } from '../util/progress.js';

/**
 * Waits for a rollout's next gate (the end of the current wave's soak), with progress lines:
 * one when the wait starts, then about every sixth of it (at least every 5 s of the gate's clock).
 */
export async function waitForGate(rollout: NonNullable<PassResult['rollout']>, clock: Clock, log: Logger, signal?: AbortSignal): Promise<void> {
  const next = rollout.next!;
  const index = rollout.waves.findIndex((wave) => wave.state === 'soaking' || wave.state === 'applying');
  const wave = rollout.waves[index];
  const following = rollout.waves[index + 1];
  const total = Math.max(0, next.at - clock.now());
  const chunk = Math.max(5_000, Math.ceil(total / 6));
  const fields = { gate: next.reason, rollout: rollout.name, ...(wave ? { wave: wave.name } : {}), ...(following ? { next: following.name } : {}) };
  if (next.reason === 'soak' && wave) {
    log.info({ ...fields, soakS: Math.round(total / 1000) }, `rollout ${rollout.name}: wave ${wave.name} is applied and healthy; soaking for ${formatElapsed(total / 1000)} before ${following ? `wave ${following.name}` : 'the rollout is done'}`);
  }
  for (;;) {
    const left = next.at - clock.now();
    if (left <= 0) break;
    try {
      await clock.sleep(Math.min(left, chunk), signal);
    } catch {
      return;
    }
    const remaining = next.at - clock.now();
    if (remaining > 0) log.info({ ...fields, leftS: Math.round(remaining / 1000) }, `rollout ${rollout.name}: wave ${wave?.name ?? ''} soaking, ${formatElapsed(remaining / 1000)} left`);
  }
  log.info(fields, following ? `rollout ${rollout.name}: the gate of wave ${wave?.name ?? ''} is due; checking its health, then wave ${following.name}` : `rollout ${rollout.name}: the last soak ended; checking its health`);
}
