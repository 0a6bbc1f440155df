import type { StateStore } from '../../types.js';

/**
 * A read replica is set up by a POST that is not idempotent, and the new replica may show in
 * the pooler list only some time later. Each setup is recorded (before it is sent) with the
 * replicas already live in its region; a later plan counts it as in flight until a replica it
 * did not know appears, or until it is older than the TTL — so a slow or lost answer never
 * leads to a second replica, and a setup that never happened is retried after a while.
 */
export interface ReplicaSetupIntent {
  region: string;
  /** Clock ms when the setup was sent. */
  at: number;
  /** Identifiers of the live replicas in that region when it was sent. */
  known: string[];
}

export const REPLICA_INTENT_TTL_MS = 30 * 60_000;

export function replicaIntentKey(ref: string): string {
  return `read-replica-intents/${ref}`;
}

export async function loadReplicaIntents(state: StateStore, ref: string): Promise<ReplicaSetupIntent[]> {
  const stored = await state.get<ReplicaSetupIntent[]>(replicaIntentKey(ref));
  return Array.isArray(stored) ? stored : [];
}

/** The intents still in flight: recent, and not yet matched by a replica they did not know. */
export function openIntents(intents: readonly ReplicaSetupIntent[], live: ReadonlyArray<{ identifier: string; region: string | undefined }>, now: number): ReplicaSetupIntent[] {
  const claimed = new Set<string>();
  const open: ReplicaSetupIntent[] = [];
  for (const intent of [...intents].sort((a, b) => a.at - b.at)) {
    if (now - intent.at >= REPLICA_INTENT_TTL_MS) continue;
    const match = live.find((r) => r.region === intent.region && !intent.known.includes(r.identifier) && !claimed.has(r.identifier));
    if (match) claimed.add(match.identifier);
    else open.push(intent);
  }
  return open;
}
