// The Rollout kind's schema: the Rollout document (waves, soak, maintenance windows, approval
// rules), owned here as every kind owns its own; the schema generator reads it from the registry.
import type { DocumentSchema, JsonSchema } from '../../manifests/schema-source.js';
import { CHANGE_CLASSES } from './change-class.js';
import { RULE_KINDS } from './kinds.js';


/** Names of waves, windows and rules: printed in plans, status and metrics, so nothing but lower-case letters, digits and `-`. */
const NAME_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';

const DURATION = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$' };

const ROLLOUT_SELECTOR = {
  title: 'RolloutSelector',
  description: 'Which projects: every label given must be present with this value in the Project document\'s `metadata.labels`, and `organization` (when given) must be its `spec.organization`. An empty selector matches every project.',
  type: 'object',
  properties: {
    labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Labels every matched project carries, with these values.' },
    organization: { type: 'string', minLength: 1, description: 'metadata.name of the Organization document of the matched projects.' },
  },
  additionalProperties: false,
};

function rolloutDefs(): Record<string, JsonSchema> {
  const classes = { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...CHANGE_CLASSES] } };
  return {
    RolloutSelector: ROLLOUT_SELECTOR,
    RolloutWave: {
      title: 'RolloutWave',
      description: 'One wave: the projects its selector matches that no earlier wave took.',
      type: 'object',
      properties: {
        name: { type: 'string', pattern: NAME_PATTERN, description: 'Name of the wave (lower-case letters, digits and `-`), shown in plans, status and metrics.' },
        selector: { description: 'The projects of the wave (those an earlier wave took excepted).', $ref: '#/$defs/RolloutSelector' },
        share: { type: 'string', pattern: '^(100|[1-9]?[0-9])(\\.[0-9]+)?%$', description: 'Take only this share of the matching projects (`10%`), chosen stably by a hash of the project name; the rest fall through to later waves. Default `100%`.' },
      },
      required: ['name', 'selector'],
      additionalProperties: false,
    },
    RolloutWindow: {
      title: 'RolloutWindow',
      description: 'A maintenance window: disruptive changes of the projects it selects are applied only while it is open.',
      type: 'object',
      properties: {
        name: { type: 'string', pattern: NAME_PATTERN, description: 'Name of the window (lower-case letters, digits and `-`), shown in plans and status.' },
        schedule: { type: 'string', minLength: 9, description: 'When the window opens: a five-field cron expression (`0 2 * * 6`: Saturdays at 02:00), read in `timeZone`.' },
        duration: { ...DURATION, description: 'How long the window stays open after each start (`2h`).' },
        timeZone: { type: 'string', minLength: 1, default: 'UTC', description: 'IANA time zone the schedule is read in (`Europe/Berlin`). Default `UTC`.' },
        selector: { description: 'The projects the window is for; default every project.', $ref: '#/$defs/RolloutSelector' },
        classes: { ...classes, description: 'The change classes the window holds; default every disruptive class.' },
      },
      required: ['name', 'schedule', 'duration'],
      additionalProperties: false,
    },
    RolloutApproval: {
      title: 'RolloutApproval',
      description: 'A rule: a change it matches (every criterion given matches) is planned and held until someone approves its revision (`reconcile approve`).',
      type: 'object',
      properties: {
        name: { type: 'string', pattern: NAME_PATTERN, description: 'Name of the rule (lower-case letters, digits and `-`), shown in plans and notifications.' },
        classes: { ...classes, description: 'Change classes that need approval.' },
        kinds: {
          type: 'array',
          minItems: 1,
          uniqueItems: true,
          items: { type: 'string', enum: [...RULE_KINDS] },
          description: 'Plan entry kinds that need approval (`ProjectAuth`, `Secret`, `Migration`, ...), or document kinds, each standing for every entry kind its documents produce: `Project` (the project, its pause and restore, and every configuration section), `Secrets` (`Secret`), `Migrations` (`Migration`).',
        },
        selector: { description: 'Projects whose changes need approval.', $ref: '#/$defs/RolloutSelector' },
      },
      required: ['name'],
      additionalProperties: false,
    },
    RolloutSpec: {
      title: 'RolloutSpec',
      description: 'How a new revision reaches the fleet. One Rollout document per manifests directory; with a shard map, one per shard (each naming its `shard`), or one without `shard` whose waves stay inside one shard.',
      type: 'object',
      properties: {
        shard: { type: 'string', minLength: 1, description: 'With a shard map: the shard whose projects this Rollout orders (its waves, windows and approvals apply to them alone). A rollout never spans shards: each shard gets its own Rollout, with its own canary.' },
        waves: {
          type: 'array',
          items: { $ref: '#/$defs/RolloutWave' },
          description: 'Waves, in order: a project belongs to the first wave whose selector (and share) takes it. Projects no wave takes form a last implicit wave named `rest`.',
        },
        soak: { ...DURATION, default: '10m', description: 'How long a wave stays applied, read back, healthy and without a failure before the next wave starts. Default `10m`.' },
        windows: { type: 'array', items: { $ref: '#/$defs/RolloutWindow' }, description: 'Maintenance windows for disruptive change classes. A project no window selects has its disruptive changes applied at any time.' },
        approvals: { type: 'array', items: { $ref: '#/$defs/RolloutApproval' }, description: 'Changes that wait for an approval of their revision.' },
      },
      additionalProperties: false,
    },
  };
}

/** The Rollout document kind: not a managed kind, it orders the writes of the others. */
export const rolloutDocument: DocumentSchema = {
  kind: 'Rollout',
  description: 'The order in which a new revision reaches the fleet (waves and their soak), maintenance windows for disruptive changes, and changes that need approval.',
  defs: rolloutDefs,
};
