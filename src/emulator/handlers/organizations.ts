import { badRequest } from '../errors.js';
import { newRef } from '../random.js';
import type { OrganizationRecord } from '../state.js';
import { created, ok, organizationFor, requireUser, type Handler } from './context.js';

function organizationSummary(org: OrganizationRecord): Record<string, unknown> {
  return { id: org.slug, slug: org.slug, name: org.name };
}

export const listOrganizations: Handler = (context) => {
  const user = requireUser(context);
  return ok(context.state.userOrganizations(user.id).map(organizationSummary));
};

export const createOrganization: Handler = (context) => {
  const user = requireUser(context);
  const { name } = context.body as { name: string };
  if (name.trim() === '') throw badRequest('`name` must not be empty');
  let slug = newRef();
  while (context.state.organizations.has(slug)) slug = newRef();
  const org: OrganizationRecord = {
    slug,
    name,
    plan: 'free',
    optInTags: [],
    allowedReleaseChannels: ['ga', 'preview'],
    members: [{ userId: user.id, role: 'Owner' }],
  };
  context.state.organizations.set(slug, org);
  return created(organizationSummary(org));
};

export const getOrganization: Handler = (context) => {
  const org = organizationFor(context, context.params.slug!);
  return ok({ id: org.slug, name: org.name, plan: org.plan, opt_in_tags: org.optInTags, allowed_release_channels: org.allowedReleaseChannels });
};

export const listMembers: Handler = (context) => {
  const org = organizationFor(context, context.params.slug!);
  return ok(
    org.members.map((member) => {
      const user = context.state.users.get(member.userId);
      return {
        user_id: member.userId,
        user_name: user?.name ?? member.userId,
        email: user?.email,
        role_name: member.role,
        mfa_enabled: user?.mfaEnabled ?? false,
      };
    }),
  );
};
