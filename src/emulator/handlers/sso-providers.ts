import { badRequest, notFound } from '../errors.js';
import { newUuid } from '../random.js';
import type { ProjectRecord, SsoProviderRecord } from '../state.js';
import { created, iso, ok, projectFor, type Handler, type HandlerContext } from './context.js';

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

interface ProviderInput {
  metadata_xml?: string;
  metadata_url?: string;
  domains?: string[];
  attribute_mapping?: { keys: Record<string, unknown> };
  name_id_format?: string;
}

function providerResponse(provider: SsoProviderRecord): Record<string, unknown> {
  return {
    id: provider.id,
    saml: {
      id: provider.samlId,
      entity_id: provider.entityId,
      ...(provider.metadataUrl !== undefined ? { metadata_url: provider.metadataUrl } : {}),
      ...(provider.metadataXml !== undefined ? { metadata_xml: provider.metadataXml } : {}),
      ...(provider.attributeMapping !== undefined ? { attribute_mapping: structuredClone(provider.attributeMapping) } : {}),
      ...(provider.nameIdFormat !== undefined ? { name_id_format: provider.nameIdFormat } : {}),
    },
    domains: provider.domains.map((d) => ({ ...d })),
    created_at: provider.createdAt,
    updated_at: provider.updatedAt,
  };
}

/** The service answers 404 on every SSO operation while SAML 2.0 is disabled in the auth config. */
function samlProject(context: HandlerContext, write: boolean): ProjectRecord {
  const project = projectFor(context, { write, service: 'auth' });
  if (project.authConfig.saml_enabled !== true) throw notFound('SAML 2.0 is disabled for this project: enable it in the auth config (saml_enabled) first');
  return project;
}

function providerFor(context: HandlerContext, project: ProjectRecord): SsoProviderRecord {
  const provider = project.ssoProviders.get(context.params.provider_id!);
  if (!provider) throw notFound(`SSO provider ${context.params.provider_id} not found`);
  return provider;
}

/** The entity id a provider gets from its metadata, as the service derives it (seeds use it too). */
export function entityIdFrom(input: ProviderInput): string {
  if (input.metadata_xml !== undefined) {
    if (!/<(?:\w+:)?EntityDescriptor[\s>]/.test(input.metadata_xml)) throw badRequest('`metadata_xml` is not SAML metadata: no EntityDescriptor element');
    const match = /entityID\s*=\s*"([^"]+)"/.exec(input.metadata_xml);
    if (!match) throw badRequest('`metadata_xml` has no entityID attribute');
    return match[1]!;
  }
  let url: URL;
  try {
    url = new URL(input.metadata_url!);
  } catch {
    throw badRequest(`\`metadata_url\` is not a URL: ${input.metadata_url}`);
  }
  if (url.protocol !== 'https:') throw badRequest('`metadata_url` must use https');
  return url.toString();
}

function checkDomains(project: ProjectRecord, domains: string[], except?: string): string[] {
  const normalized = domains.map((d) => d.trim().toLowerCase());
  normalized.forEach((domain, index) => {
    if (!DOMAIN.test(domain)) throw badRequest(`\`domains[${index}]\` is not a valid domain: ${domain}`);
    if (normalized.indexOf(domain) !== index) throw badRequest(`\`domains[${index}]\`: ${domain} is listed twice`);
    for (const other of project.ssoProviders.values()) {
      if (other.id !== except && other.domains.some((d) => d.domain === domain)) throw badRequest(`The domain ${domain} is already assigned to SSO provider ${other.id}`);
    }
  });
  return normalized;
}

export const listProviders: Handler = (context) => ok({ items: [...samlProject(context, false).ssoProviders.values()].map(providerResponse) });

export const getProvider: Handler = (context) => ok(providerResponse(providerFor(context, samlProject(context, false))));

export const createProvider: Handler = (context) => {
  const project = samlProject(context, true);
  const input = context.body as ProviderInput & { type: 'saml' };
  if ((input.metadata_xml === undefined) === (input.metadata_url === undefined)) throw badRequest('Give exactly one of `metadata_xml` or `metadata_url`');
  const entityId = entityIdFrom(input);
  if ([...project.ssoProviders.values()].some((p) => p.entityId === entityId)) throw badRequest(`An SSO provider with entity id ${entityId} already exists`);
  const domains = checkDomains(project, input.domains ?? []);
  const stamp = iso(context.now);
  const provider: SsoProviderRecord = {
    id: newUuid(), samlId: newUuid(), entityId, metadataUrl: input.metadata_url, metadataXml: input.metadata_xml,
    attributeMapping: input.attribute_mapping, nameIdFormat: input.name_id_format,
    domains: domains.map((domain) => ({ id: newUuid(), domain, created_at: stamp, updated_at: stamp })),
    createdAt: stamp, updatedAt: stamp,
  };
  project.ssoProviders.set(provider.id, provider);
  return created(providerResponse(provider));
};

export const updateProvider: Handler = (context) => {
  const project = samlProject(context, true);
  const provider = providerFor(context, project);
  const input = context.body as ProviderInput;
  if (input.metadata_xml !== undefined && input.metadata_url !== undefined) throw badRequest('Give at most one of `metadata_xml` or `metadata_url`');
  const entityId = input.metadata_xml !== undefined || input.metadata_url !== undefined ? entityIdFrom(input) : provider.entityId;
  if (entityId !== provider.entityId) throw badRequest('The entity id of an SSO provider cannot change; create a new provider instead');
  const domains = input.domains !== undefined ? checkDomains(project, input.domains, provider.id) : undefined;
  const stamp = iso(context.now);
  if (input.metadata_xml !== undefined) {
    provider.metadataXml = input.metadata_xml;
    provider.metadataUrl = undefined;
  }
  if (input.metadata_url !== undefined) {
    provider.metadataUrl = input.metadata_url;
    provider.metadataXml = undefined;
  }
  if (input.attribute_mapping !== undefined) provider.attributeMapping = input.attribute_mapping;
  if (input.name_id_format !== undefined) provider.nameIdFormat = input.name_id_format;
  if (domains) {
    const kept = new Map(provider.domains.map((d) => [d.domain, d]));
    provider.domains = domains.map((domain) => kept.get(domain) ?? { id: newUuid(), domain, created_at: stamp, updated_at: stamp });
  }
  provider.updatedAt = stamp;
  return ok(providerResponse(provider));
};

export const deleteProvider: Handler = (context) => {
  const project = samlProject(context, true);
  const provider = providerFor(context, project);
  project.ssoProviders.delete(provider.id);
  return ok(providerResponse(provider));
};
