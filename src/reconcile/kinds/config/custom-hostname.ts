import { InvalidRequestError, NotFoundError } from '../../../api/errors.js';
import type { UpdateCustomHostnameResponse } from '../../../api/types.js';
import type { CustomHostnameSpec } from '../../../manifests/types.js';
import type { KindContext, PlanEntry, ProjectScope } from '../../types.js';
import { convertOpenApiSchema, type JsonSchema } from '../../../manifests/schema-source.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectCustomHostname', key: 'custom_hostname' } as const;
const HOSTNAME_PATH = `${SECTION.key}.custom_hostname`;
const STATUS_PATH = `${SECTION.key}.status`;
const ACTIVE = '5_services_reconfigured';

/**
 * Custom hostname, a process more than a value: initialize (when absent or different),
 * then reverify while the service waits for the DNS records, then activate once the origin
 * is set up (unless `activate: false`). Each pass moves it one step; waiting for DNS is
 * `pending` with the records to create, never a failure.
 */
export const customHostnameConfig: ConfigSection<'ProjectCustomHostname'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'ssl_enforcement',
    property: { description: 'A custom hostname for the project.', $ref: '#/$defs/CustomHostnameSpec' },
    defs: (openapi) => ({
      CustomHostnameSpec: {
        title: 'CustomHostnameSpec',
        description: 'A custom hostname: initialized, re-verified and activated as its status allows.',
        type: 'object',
        properties: {
          custom_hostname: {
            ...convertOpenApiSchema((openapi.components.schemas.UpdateCustomHostnameBody!.properties as Record<string, JsonSchema>).custom_hostname!),
            format: 'hostname',
            description: 'The hostname, for example `api.example.com`.',
          },
          activate: { type: 'boolean', default: true, description: 'Activate once the hostname is verified (default true).' },
        },
        required: ['custom_hostname'],
        additionalProperties: false,
      },
    }),
  },
  services: [],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<CustomHostnameSpec>(scope, SECTION.key);
    if (scope.ref === undefined) return [initialize(scope, desired, undefined)];
    const live = await readHostname(scope, ctx, scope.ref);
    const hostname = desired.custom_hostname;
    if (live === undefined || live.status === '1_not_started' || !sameHostname(live.custom_hostname, hostname)) {
      return [initialize(scope, desired, live)];
    }
    switch (live.status) {
      case '3_challenge_verified':
        // The service sets up the origin on its own once the challenge is verified: nothing to send.
        return [
          sectionEntry(scope, SECTION, {
            action: 'noop',
            pending: true,
            changes: [{ path: STATUS_PATH, before: live.status, after: ACTIVE }],
            reason: `${hostname} is verified; waiting for the origin setup`,
          }),
        ];
      case '2_initiated':
        return [
          sectionEntry(scope, SECTION, {
            action: 'update',
            pending: true,
            changes: [{ path: STATUS_PATH, before: live.status, after: '3_challenge_verified' }],
            reason: `waiting for DNS verification of ${hostname}${dnsRecords(live)}; reverify`,
          }),
        ];
      case '4_origin_setup_completed':
        if (desired.activate === false) {
          return [sectionEntry(scope, SECTION, { action: 'noop', reason: `${hostname} is verified and not activated (activate: false)` })];
        }
        return [sectionEntry(scope, SECTION, { action: 'update', changes: [{ path: STATUS_PATH, before: live.status, after: ACTIVE }], reason: `${hostname} is verified: activate it` })];
      case ACTIVE:
        return [sectionEntry(scope, SECTION, { action: 'noop' })];
      default:
        // An open enum: a status this version does not know is reported, not acted upon.
        return [sectionEntry(scope, SECTION, { action: 'noop', pending: true, reason: `custom hostname status \`${live.status}\`: waiting` })];
    }
  },
  // The step is the one the entry plans: a new hostname is initialized, a status moving on to
  // `3_challenge_verified` is a reverify, one moving on to active an activation.
  async apply(entry, scope, ctx) {
    const change = entry.changes[0];
    if (change?.path === STATUS_PATH && change.after === ACTIVE) {
      await ctx.api.activateCustomHostname(refAtApply(scope, ctx), writeOptions(scope, ctx));
    } else if (change?.path === STATUS_PATH) {
      await reverify(scope, ctx);
    } else {
      const desired = sectionSpec<CustomHostnameSpec>(scope, SECTION.key);
      await ctx.api.updateHostnameConfig(refAtApply(scope, ctx), { custom_hostname: desired.custom_hostname }, writeOptions(scope, ctx));
    }
  },
  async export({ api, ref, read }) {
    const hostname = await read(() => api.getHostnameConfig(ref));
    if (!hostname?.custom_hostname || hostname.status === '1_not_started') return undefined;
    return { custom_hostname: hostname.custom_hostname, activate: hostname.status === ACTIVE };
  },
};

function initialize(scope: ProjectScope, desired: CustomHostnameSpec, live: UpdateCustomHostnameResponse | undefined): PlanEntry {
  const before = live?.custom_hostname ? live.custom_hostname : undefined;
  return sectionEntry(scope, SECTION, {
    action: scope.ref === undefined ? 'create' : 'update',
    changes: [{ path: HOSTNAME_PATH, after: desired.custom_hostname, ...(before !== undefined ? { before } : {}) }],
    reason: 'initialize; DNS verification follows',
  });
}

async function reverify(scope: ProjectScope, ctx: KindContext): Promise<void> {
  try {
    await ctx.api.verifyDnsConfig(refAtApply(scope, ctx), writeOptions(scope, ctx));
  } catch (error) {
    // The service refuses a reverify while the records are not there yet: still pending, not a failure.
    if (!(error instanceof InvalidRequestError)) throw error;
    ctx.log.info({ project: scope.name, kind: SECTION.kind }, 'custom hostname not verified yet');
  }
}

async function readHostname(scope: ProjectScope, ctx: KindContext, ref: string): Promise<UpdateCustomHostnameResponse | undefined> {
  try {
    return await ctx.api.getHostnameConfig(ref, readOptions(scope, ctx));
  } catch (error) {
    // Never configured: the service may answer 404 rather than `1_not_started`.
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

function sameHostname(live: string | undefined, desired: string): boolean {
  return (live ?? '').trim().toLowerCase().replace(/\.$/, '') === desired.trim().toLowerCase().replace(/\.$/, '');
}

/** The DNS records to create, for the reason text (public values, never secrets). */
function dnsRecords(live: UpdateCustomHostnameResponse): string {
  const result = live.data?.result;
  const records: string[] = [];
  if (result?.ownership_verification?.name) records.push(`${result.ownership_verification.type ?? 'TXT'} ${result.ownership_verification.name}`);
  for (const record of result?.ssl?.validation_records ?? []) if (record.txt_name) records.push(`TXT ${record.txt_name}`);
  return records.length ? ` (records: ${records.join(', ')})` : '';
}
