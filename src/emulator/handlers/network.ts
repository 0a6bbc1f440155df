import { isIPv4 } from 'node:net';
import { badRequest } from '../errors.js';
import { applyNetworkRestrictions } from '../section-updates.js';
import type { ProjectRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler } from './context.js';

function restrictionsResponse(project: ProjectRecord): Record<string, unknown> {
  const r = project.networkRestrictions;
  return {
    entitlement: r.entitlement,
    config: structuredClone(r.config),
    ...(r.oldConfig ? { old_config: structuredClone(r.oldConfig) } : {}),
    status: r.status,
    ...(r.updatedAt ? { updated_at: r.updatedAt } : {}),
    ...(r.appliedAt ? { applied_at: r.appliedAt } : {}),
  };
}

export const getNetworkRestrictions: Handler = (context) => ok(restrictionsResponse(projectFor(context, { service: 'db' })));

export const applyRestrictions: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  if (project.networkRestrictions.entitlement === 'disallowed') throw badRequest('Network restrictions are not available on this plan');
  applyNetworkRestrictions(project, context.body as { dbAllowedCidrs?: string[]; dbAllowedCidrsV6?: string[] }, iso(context.now));
  const target = project.networkRestrictions;
  const at = context.now + context.durations.networkRestrictionsApply;
  context.state.schedule(at, () => {
    if (project.networkRestrictions !== target || target.status !== 'stored' || target.updatedAt !== iso(context.now)) return;
    target.status = 'applied';
    target.appliedAt = iso(at);
  });
  return created(restrictionsResponse(project));
};

export const listNetworkBans: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  return created({ banned_ipv4_addresses: [...project.networkBans] });
};

export const deleteNetworkBans: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const { ipv4_addresses } = context.body as { ipv4_addresses: string[] };
  const invalid = ipv4_addresses.filter((address) => !isIPv4(address));
  if (invalid.length > 0) throw badRequest(`\`ipv4_addresses\` holds invalid IPv4 addresses: ${invalid.join(', ')}`);
  const remove = new Set(ipv4_addresses);
  project.networkBans = project.networkBans.filter((address) => !remove.has(address));
  return ok({});
};
