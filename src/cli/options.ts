// Every command-line option, in one table: parsing, each command's options, `--help` and the
// settings' defaults derive from it; docs/commands.md documents each.

/** The command words (`reconcile` alone is a pass, one-shot or `--watch`). */
export const COMMAND_NAMES = ['reconcile', 'apply', 'validate', 'render', 'status', 'export', 'branch', 'emulator', 'trigger', 'approve', 'resume', 'show'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** The commands that talk to an API (or the sandbox's). */
const API = ['reconcile', 'apply', 'status', 'export', 'branch'] as const;
/** Options of the daemon alone (`reconcile --watch`). */
const WATCH = ['reconcile'] as const;

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Environment variable that supplies the default. */
  env?: string;
  description: string;
  /** Value placeholder shown in help. */
  placeholder?: string;
  default?: string;
  /** Repeatable; its values are in `CommandContext.lists`, not `values`. */
  multiple?: boolean;
  short?: string;
  /** The commands that read it (`all`: every command); another command refuses it as a flag. */
  commands: readonly CommandName[] | 'all';
}

const TABLE = {
  manifests: { type: 'string', placeholder: 'DIR', description: 'manifests directory (default: the current directory)', commands: ['reconcile', 'apply', 'validate', 'render', 'status', 'branch'] },
  'dry-run': { type: 'boolean', description: 'plan only: GET requests only, nothing written', commands: ['reconcile'] },
  watch: { type: 'boolean', description: 'run as a long-running daemon (with --dry-run: detect drift only)', commands: ['reconcile'] },
  'api-url': { type: 'string', env: 'MANAGEMENT_API_URL', placeholder: 'URL', description: 'base URL of the Management API', commands: API },
  'token-file': { type: 'string', env: 'MANAGEMENT_API_TOKEN_FILE', placeholder: 'PATH', description: 'read the access token from a file, re-read when it changes', commands: ['reconcile', 'apply', 'validate', 'status', 'export', 'branch'] },
  sandbox: { type: 'boolean', description: 'start the emulator in-process and run against it (no account needed)', commands: ['reconcile', 'apply', 'validate', 'status', 'export', 'branch'] },
  seed: { type: 'string', placeholder: 'FILE', description: "the emulator's starting state (YAML or JSON)", commands: [...API, 'emulator'] },
  output: { type: 'string', placeholder: 'text|json|markdown', default: 'text', description: 'plan and result format', commands: ['reconcile', 'apply', 'validate', 'render', 'status', 'branch', 'show'] },
  'detailed-exitcode': { type: 'boolean', description: 'exit 2 when the plan has changes', commands: ['reconcile', 'apply'] },
  'rate-limit': { type: 'string', env: 'RECONCILE_RATE_LIMIT', placeholder: 'N/DURATION', description: 'request budget (default: 45/60s with --watch, 15/60s otherwise, so a daemon and a CI run on one identity stay within its 60/60s)', commands: [...API, 'emulator'] },
  'rate-model': { type: 'string', env: 'RECONCILE_RATE_MODEL', placeholder: 'user|scoped', default: 'user', description: "how the service counts requests: user (the spec's limit per user across tokens) or scoped (per user, scope and endpoint, learned from the answers' headers)", commands: [...API, 'emulator'] },
  'secret-dirs': { type: 'string', env: 'RECONCILE_SECRET_DIRS', placeholder: 'DIR[:DIR...]', description: 'directories besides the manifests directory that `valueFrom.file` references may read (for example a mounted secrets volume)', commands: ['reconcile', 'apply', 'validate', 'render', 'status', 'branch'] },
  'state-dir': { type: 'string', env: 'RECONCILE_STATE_DIR', placeholder: 'DIR', default: '.reconcile', description: 'inventory, creation intents, function digests and the request window; by default `.reconcile` inside the manifests directory', commands: [...API, 'validate', 'render'] },
  resync: { type: 'string', env: 'RECONCILE_RESYNC', placeholder: 'continuous|CRON', default: '*/10 * * * *', description: 'drift re-checks in --watch: continuous (oldest observation first, with the budget writes do not need) or a cron schedule', commands: WATCH },
  'max-observation-age': { type: 'string', env: 'RECONCILE_MAX_OBSERVATION_AGE', placeholder: 'DURATION', description: 'in --watch: the freshness an alert holds the daemon to (exported as reconciler_max_observation_age_seconds; a warning when the budget cannot meet it)', commands: WATCH },
  observe: { type: 'string', env: 'RECONCILE_OBSERVE', placeholder: 'LIST', default: 'health', description: 'observed-only facts read on each drift re-check in --watch: health,bans,api_keys,backups,readonly,upgrade, all or none (one request each per project)', commands: WATCH },
  'metrics-addr': { type: 'string', env: 'RECONCILE_METRICS_ADDR', placeholder: 'HOST:PORT', default: '0.0.0.0:9464', description: '/metrics, /healthz and /readyz in --watch', commands: WATCH },
  'http-timeout': { type: 'string', env: 'RECONCILE_HTTP_TIMEOUT', placeholder: 'DURATION', default: '30s', description: 'longest wait for the headers of an answer (and again for its body) before the request counts as failed', commands: API },
  'log-level': { type: 'string', env: 'RECONCILE_LOG_LEVEL', placeholder: 'LEVEL', default: 'info', description: 'pino level: trace, debug, info, warn, error, fatal, silent', commands: 'all' },
  'log-format': { type: 'string', env: 'RECONCILE_LOG_FORMAT', placeholder: 'json|pretty', description: 'log lines: pretty (one concise line per event, colour unless NO_COLOR) or json (default: pretty on a terminal, json otherwise)', commands: 'all' },
  'metrics-per-resource': { type: 'string', env: 'RECONCILE_METRICS_PER_RESOURCE', placeholder: 'true|false', default: 'true', description: 'in --watch: export the per-resource series (reconciler_resource_in_sync, reconciler_resource_condition); false keeps the series per project', commands: WATCH },
  'allow-empty': { type: 'boolean', description: 'let an empty manifest set prune (never by default)', commands: ['reconcile', 'apply'] },
  yes: { type: 'boolean', description: 'apply without asking: on a terminal, a one-shot apply shows the plan and asks for confirmation first', commands: ['reconcile', 'apply'] },
  shard: { type: 'string', env: 'RECONCILE_SHARD', placeholder: 'NAME', description: 'reconcile only this shard of the shard map, with its own credentials, budget and state directory (<state-dir>/shards/NAME)', commands: ['reconcile', 'apply', 'validate', 'status'] },
  shards: { type: 'string', env: 'RECONCILE_SHARDS', placeholder: 'FILE', description: 'the shard map (default: shards.yaml in the manifests directory, when present)', commands: ['reconcile', 'apply', 'validate', 'status'] },
  'lock-timeout': { type: 'string', env: 'RECONCILE_LOCK_TIMEOUT', placeholder: 'DURATION', default: '60s', description: 'a state lock whose heartbeat is older than this is stale and taken over (heartbeat every quarter of it)', commands: ['reconcile', 'apply'] },
  'organization-wait': { type: 'string', env: 'RECONCILE_ORGANIZATION_WAIT', placeholder: 'DURATION', default: '60s', description: "with --shard: how long an apply waits for a missing organization that another shard creates (0s: fail at once, naming the organization and its owner)", commands: ['reconcile', 'apply'] },
  notify: { type: 'string', multiple: true, placeholder: 'URL', description: 'in --watch: send events to this webhook (signed with RECONCILE_NOTIFY_SECRET_FILE or RECONCILE_NOTIFY_SECRET) or Slack incoming webhook; repeatable', commands: WATCH },
  notifications: { type: 'string', env: 'RECONCILE_NOTIFICATIONS', placeholder: 'FILE', description: 'in --watch: receivers of events (webhooks, Slack, GitHub commit statuses), see docs/notifications-and-triggers.md', commands: WATCH },
  'trigger-token-file': { type: 'string', env: 'RECONCILE_TRIGGER_TOKEN_FILE', placeholder: 'PATH', description: 'in --watch: enables POST /reconcile, /approve and /resume with this bearer token; trigger, approve, resume: the token to send', commands: ['reconcile', 'trigger', 'approve', 'resume'] },
  'trigger-interval': { type: 'string', env: 'RECONCILE_TRIGGER_INTERVAL', placeholder: 'DURATION', default: '30s', description: 'in --watch: a POST /reconcile for projects that a pass finished less than this long ago, with no new revision since, is answered with that pass and starts none (0s: no limit)', commands: WATCH },
  'webhook-secret-file': { type: 'string', env: 'RECONCILE_WEBHOOK_SECRET_FILE', placeholder: 'PATH', description: 'in --watch: enables POST /reconcile/webhook for signed git push webhooks (GitHub, GitLab, generic HMAC)', commands: WATCH },
  'daemon-url': { type: 'string', env: 'RECONCILE_DAEMON_URL', placeholder: 'URL', default: 'http://127.0.0.1:9464', description: "trigger, approve, resume, status: the daemon's HTTP server (its --metrics-addr); status reads the daemon's view only when this is given", commands: ['status', 'trigger', 'approve', 'resume'] },
  'status-token-file': { type: 'string', env: 'RECONCILE_STATUS_TOKEN_FILE', placeholder: 'PATH', description: 'in --watch: GET /status and the status page (GET /) want this bearer token; status, approve: the token to send', commands: ['reconcile', 'status', 'approve'] },
  'status-public': { type: 'string', env: 'RECONCILE_STATUS_PUBLIC', placeholder: 'true|false', default: 'false', description: 'in --watch without --status-token-file: answer GET /status and the status page to every client (by default only loopback clients are answered)', commands: WATCH },
  'runbook-url': { type: 'string', env: 'RECONCILE_RUNBOOK_URL', placeholder: 'URL', description: "in --watch: where the team publishes docs/runbook.md; the status page links its sections", commands: WATCH },
  live: { type: 'boolean', description: 'status: observe through the API now (reads under the budget; needs every secret variable) instead of reading the recorded view', commands: ['status'] },
  project: { type: 'string', placeholder: 'REF|NAME', description: 'export, branch, status: the project; trigger, approve: Project manifest names, comma-separated', commands: ['export', 'branch', 'status', 'trigger', 'approve'] },
  all: { type: 'boolean', description: 'export: every live project', commands: ['export'] },
  revision: { type: 'string', placeholder: 'COMMIT', description: 'approve: the revision to approve (required unless on a terminal, which is shown the revision and asked); an approval expires with its revision. resume: the halted revision to resume (another is refused)', commands: ['approve', 'resume'] },
  rollout: { type: 'string', placeholder: 'NAME', description: 'resume: the Rollout document (default: the only one)', commands: ['resume'] },
  out: { type: 'string', placeholder: 'DIR|FILE', description: 'export: where to write manifests (default: standard output); with --dry-run: where to save the plan for `reconcile apply FILE`', commands: ['reconcile', 'export'] },
  'max-plan-age': { type: 'string', env: 'RECONCILE_MAX_PLAN_AGE', placeholder: 'DURATION', default: '24h', description: 'apply: refuse a saved plan older than this', commands: ['apply'] },
  // emulator
  host: { type: 'string', placeholder: 'HOST', default: '127.0.0.1', description: 'emulator: address to bind', commands: ['emulator'] },
  port: { type: 'string', placeholder: 'PORT', default: '8787', description: 'emulator: port (0 picks a free one)', commands: ['emulator'] },
  token: { type: 'string', placeholder: 'TOKEN', description: "emulator: the default user's personal access token", commands: ['emulator'] },
  speed: { type: 'string', placeholder: 'FACTOR', default: '1', description: 'emulator: run the lifecycle clock this many times faster', commands: ['emulator'] },
  help: { type: 'boolean', short: 'h', description: 'show help', commands: 'all' },
  version: { type: 'boolean', description: 'show the version', commands: 'all' },
} as const satisfies Record<string, OptionSpec>;

/** The options by name (flags without their dashes). */
export const OPTIONS: Readonly<Record<string, OptionSpec>> = TABLE;
export type OptionName = keyof typeof TABLE;
/** The options a command reads. */
export type OptionsOf<C extends CommandName> = { [N in OptionName]: (typeof TABLE)[N]['commands'] extends 'all' ? N : C extends (typeof TABLE)[N]['commands'][number] ? N : never }[OptionName];

/** Whether `command` reads the option `name`. */
export function commandTakes(command: CommandName, name: string): boolean {
  const commands = OPTIONS[name]?.commands;
  return commands === 'all' || (commands?.includes(command) ?? false);
}

export type ParsedValues = Record<string, string | boolean | undefined>;
/** Repeatable options (`multiple`), every value in order. */
export type ParsedLists = Record<string, string[]>;
