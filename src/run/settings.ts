// What the conductor reads of the process's settings: a slice of the command's `Settings`
// (src/cli/settings.ts), which the command passes as it is. Nothing else of the options
// reaches src/run/.
import type { RateSpec } from '../util/rate.js';

export interface RunSettings {
  /** `--sandbox`: the emulator in-process, with a state directory of its own. */
  sandbox: boolean;
  /** `--api-url`: a shard's credentials are read for this API. */
  apiUrl?: string;
  /** `--rate-limit` when given: a one-shot run without it (and without a shard's rate) has the one-shot default budget. */
  rateLimit?: RateSpec;
  /** `--allow-empty`. */
  allowEmpty: boolean;
  /** `--lock-timeout`: how old a holder's heartbeat must be before its lock is taken over. */
  lockTimeoutMs: number;
  /** `--organization-wait`. */
  organizationWaitMs: number;
}
