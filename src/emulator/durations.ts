/** How long each lifecycle transition takes, in emulator-clock milliseconds. */
export interface LifecycleDurations {
  /** COMING_UP -> ACTIVE_HEALTHY after a create. */
  projectCreate: number;
  /** After the project turns ACTIVE_HEALTHY, until `/health` reports its services healthy (staggered up to this). */
  servicesHealthy: number;
  /** PAUSING -> INACTIVE. */
  pause: number;
  /** RESTORING -> ACTIVE_HEALTHY (restore and point-in-time restore). */
  restore: number;
  /** Each step of a Postgres upgrade's progress (0_requested ... 10_completed_post_physical_backup). */
  upgradeStep: number;
  /** After initialize, until the DNS records count as published and reverify succeeds. */
  customHostnameVerification: number;
  /** 3_challenge_verified -> 4_origin_setup_completed. */
  customHostnameOriginSetup: number;
  /** Each step of a branch's status (CREATING_PROJECT -> RUNNING_MIGRATIONS -> MIGRATIONS_PASSED -> FUNCTIONS_DEPLOYED). */
  branchStep: number;
  /** Network restrictions: stored -> applied. */
  networkRestrictionsApply: number;
  /** How long `readonly/temporary-disable` lifts read-only mode (the spec: 15 minutes). */
  readonlyOverride: number;
}

export const DEFAULT_DURATIONS: LifecycleDurations = {
  projectCreate: 120_000,
  servicesHealthy: 30_000,
  pause: 60_000,
  restore: 120_000,
  upgradeStep: 30_000,
  customHostnameVerification: 60_000,
  customHostnameOriginSetup: 60_000,
  branchStep: 30_000,
  networkRestrictionsApply: 15_000,
  readonlyOverride: 15 * 60_000,
};

export function resolveDurations(overrides: Partial<LifecycleDurations> | undefined): LifecycleDurations {
  const out = { ...DEFAULT_DURATIONS };
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (!(name in DEFAULT_DURATIONS)) {
      throw new TypeError(`Unknown lifecycle duration \`${name}\`; expected one of ${Object.keys(DEFAULT_DURATIONS).join(', ')}`);
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new TypeError(`Expected \`durations.${name}\` to be a finite number >= 0, got \`${String(value)}\` (${typeof value})`);
    }
    out[name as keyof LifecycleDurations] = value;
  }
  return out;
}
