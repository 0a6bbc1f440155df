// `SsoProvider`: SAML providers, matched to live ones by domain (see sso-match.ts). One list
// per project; create with POST, update with PUT, delete only with `spec.prune.ssoProviders`.
import { convertOpenApiSchema, PROJECT_REFERENCE, POLICY, type OpenApiDocument, type JsonSchema } from '../../manifests/schema-source.js';
import type { CreateProviderBody, ListProvidersResponse, UpdateProviderBody } from '../../api/types.js';
import { API_VERSION, type SsoProviderDocument } from '../../manifests/types.js';
import { textOf, type CheckedEntry, type KindCheck } from '../../manifests/load-facets.js';
import type { KindModule, Logger, PlanEntry, ProjectScope } from '../types.js';
import { makeEntry } from '../diff.js';
import { activeDocuments, allDocuments, DocumentGoneError, isObserveOnly, planPrune, projectDependency, refAtApply, sourceOf } from './common.js';
import { diffProvider, entityIdConflict, matchProviders, providerDomains, type LiveProvider } from './sso-match.js';
import { NotFoundError } from '../../api/errors.js';

function pruneEnabled(project: ProjectScope): boolean {
  return project.document.spec.prune?.ssoProviders === true;
}

function providerBody(doc: SsoProviderDocument): UpdateProviderBody {
  const body: UpdateProviderBody = { domains: [...doc.spec.domains] };
  if (doc.spec.metadata_url !== undefined) body.metadata_url = doc.spec.metadata_url;
  if (doc.spec.metadata_xml !== undefined) body.metadata_xml = doc.spec.metadata_xml;
  if (doc.spec.attribute_mapping !== undefined) body.attribute_mapping = doc.spec.attribute_mapping;
  return body;
}

/** The schema of the `SsoProvider` document (`SsoProviderSpec`): `npm run generate:schemas` writes it to `schemas/sso-provider.schema.json`. */
const ATTRIBUTE_MAPPING_FIELDS: Record<string, string> = {
  '': 'Maps SAML attributes to user fields: `{keys: {<field>: {name, names, default, array}}}`.',
  keys: 'User field -> how to read it from the SAML assertion.',
  'keys.*.name': 'The SAML attribute holding the value.',
  'keys.*.names': 'SAML attributes to try in order; the first present wins.',
  'keys.*.default': 'Value used when the assertion carries none of the attributes.',
  'keys.*.array': 'Keep every value of a multi-valued attribute (a list), not only the first.',
};

function ssoDefs(openapi: OpenApiDocument): Record<string, JsonSchema> {
  const body = openapi.components.schemas.CreateProviderBody!.properties as Record<string, JsonSchema>;
  return {
    SsoProviderSpec: {
      title: 'SsoProviderSpec',
      description: 'A SAML identity provider, matched to the live one by its domains (the service assigns the ids). Exactly one of `metadata_url` or `metadata_xml`.',
      type: 'object',
      properties: {
        project: PROJECT_REFERENCE,
        type: { ...convertOpenApiSchema(body.type!), description: 'Provider type.' },
        metadata_url: { type: 'string', format: 'uri', description: "URL of the identity provider's SAML metadata." },
        metadata_xml: { type: 'string', minLength: 1, description: "The identity provider's SAML metadata document." },
        domains: {
          type: 'array',
          minItems: 1,
          items: { type: 'string', format: 'hostname' },
          description: 'Email domains whose users sign in through this provider; a domain belongs to one provider only.',
        },
        attribute_mapping: convertOpenApiSchema(body.attribute_mapping!, (path) => ATTRIBUTE_MAPPING_FIELDS[path.join('.')]),
        policy: POLICY,
      },
      required: ['project', 'type', 'domains'],
      additionalProperties: false,
    },
  };
}

/** One metadata source, a project that allows SAML, and each domain claimed once per project. */
const checkSsoProviders: KindCheck = (entries, check) => {
  // SSO domains claimed so far, by project and lower-cased domain.
  const domainOwners = new Map<string, { entry: CheckedEntry; index: number }>();
  for (const entry of entries) {
    const project = textOf(entry.spec.project);
    // Not in the schema: strict ajv refuses `oneOf: [{required}]` without the properties.
    const sources = ['metadata_url', 'metadata_xml'].filter((field) => entry.spec[field] !== undefined);
    if (sources.length !== 1) {
      check.error(entry, sources.length ? `/spec/${sources[1]}` : '/spec', `set exactly one of \`metadata_url\` or \`metadata_xml\`${sources.length ? ', not both' : ''}`);
    }
    const owner = check.projectByName.get(project);
    const ownerAuth = owner?.spec.auth as Record<string, unknown> | undefined;
    if (ownerAuth?.saml_enabled === false) {
      check.error(entry, '/spec/project', `project \`${project}\` sets auth.saml_enabled: false, so it can have no SSO provider`);
    }
    const domains = Array.isArray(entry.spec.domains) ? entry.spec.domains : [];
    domains.forEach((domain, index) => {
      if (typeof domain !== 'string' || project === undefined) return;
      const key = `${project}\u0000${domain.toLowerCase()}`;
      const first = domainOwners.get(key);
      if (first) {
        check.error(entry, `/spec/domains/${index}`, `SSO domain \`${domain}\` is claimed twice in project \`${project}\`: also at ${check.where(first.entry, `/spec/domains/${first.index}`)}`);
      } else domainOwners.set(key, { entry, index });
    });
  }
};

export const ssoProvidersKind: KindModule<'SsoProvider'> = {
  kind: 'SsoProvider',
  document: { kind: 'SsoProvider', description: 'A SAML SSO provider of a project.', defs: ssoDefs },
  checks: checkSsoProviders,
  // Providers are written through the auth service.
  services: ['auth'],
  manages(project) {
    return activeDocuments(project, 'SsoProvider').length > 0 || pruneEnabled(project);
  },
  async plan(project, ctx) {
    const docs = activeDocuments<SsoProviderDocument>(project, 'SsoProvider');
    const samlDeclared = project.document.spec.auth?.saml_enabled === true;
    let live: LiveProvider[] = [];
    let samlOff = false;
    if (project.ref) {
      try {
        live = (await ctx.api.listAllSsoProvider(project.ref, { ...(ctx.signal ? { signal: ctx.signal } : {}) })).items;
      } catch (error) {
        // The service answers 404 on every SSO call while SAML is disabled in the auth config.
        if (!(error instanceof NotFoundError)) throw error;
        samlOff = true;
      }
    }
    if (samlOff && !samlDeclared) {
      return docs.map((doc) =>
        makeEntry({
          kind: 'SsoProvider',
          name: doc.metadata.name,
          project: project.name,
          changes: [],
          action: 'blocked',
          reason: 'SAML is disabled for this project: set spec.auth.saml_enabled: true on the Project',
          source: sourceOf(doc),
        }),
      );
    }
    // Suspended documents still claim their live provider, so that it is never pruned.
    const claims = allDocuments<SsoProviderDocument>(project, 'SsoProvider').map((doc) => ({ key: doc.metadata.name, domains: doc.spec.domains }));
    const match = matchProviders(claims, live);
    const planned: PlanEntry[] = [];

    for (const doc of docs) {
      const name = doc.metadata.name;
      const observeOnly = isObserveOnly(doc);
      const base = { kind: 'SsoProvider' as const, name, project: project.name, source: sourceOf(doc), dependsOn: projectDependency(project), ...(observeOnly ? { observeOnly } : {}) };
      const why = match.ambiguous.get(name);
      if (why) {
        planned.push(makeEntry({ ...base, changes: [], action: 'blocked', reason: why }));
        continue;
      }
      const current = match.matched.get(name);
      const body = providerBody(doc);
      if (!current) {
        planned.push(
          makeEntry({
            ...base,
            action: 'create',
            changes: Object.entries(body).map(([path, after]) => ({ path, after: path === 'metadata_xml' ? '(metadata document from the manifest)' : after })),
          }),
        );
        continue;
      }
      const conflict = entityIdConflict(doc.spec, current);
      if (conflict) {
        planned.push(makeEntry({ ...base, changes: [], action: 'blocked', reason: conflict }));
        continue;
      }
      const changes = diffProvider(doc.spec, current);
      planned.push(makeEntry({ ...base, changes, ...(changes.length > 0 ? { target: { id: current.id } } : {}) }));
    }

    planned.push(
      ...planPrune(project, {
        kind: 'SsoProvider',
        undeclared: match.unmatched,
        enabled: pruneEnabled(project),
        child: (provider) => {
          const domains = providerDomains(provider);
          return {
            name: domains[0] ?? provider.id,
            changes: [{ path: 'domains', before: domains }],
            reason: `provider ${provider.id} is not declared and spec.prune.ssoProviders is true`,
            target: { id: provider.id },
          };
        },
        kept: (providers) => {
          for (const provider of providers) ctx.log.debug({ project: project.name, provider: provider.id }, 'live SSO provider not in the manifests; kept (spec.prune.ssoProviders is not true)');
        },
      }),
    );
    return planned;
  },
  async apply(entry, project, ctx) {
    const options = { priority: 'write' as const, ...(ctx.signal ? { signal: ctx.signal } : {}) };
    const ref = refAtApply(project, ctx);
    const id = entry.target?.id as string;
    if (entry.action === 'delete') {
      await ctx.api.deleteASsoProvider(ref, id, options);
      ctx.log.info({ project: project.name, provider: id }, 'SSO provider deleted');
      return;
    }
    const doc = activeDocuments<SsoProviderDocument>(project, 'SsoProvider').find((d) => d.metadata.name === entry.name);
    if (!doc) throw new DocumentGoneError('SsoProvider', entry.name, project.name);
    const body = providerBody(doc);
    if (entry.action === 'create') {
      const created = await ctx.api.createASsoProvider(ref, { type: doc.spec.type, ...body } as CreateProviderBody, options);
      ctx.log.info({ project: project.name, provider: entry.name, id: created.id }, 'SSO provider created');
      return;
    }
    await ctx.api.updateASsoProvider(ref, id, body, options);
    ctx.log.info({ project: project.name, provider: entry.name, id }, 'SSO provider updated');
  },
  async exportDocuments({ api, ref, name, spec, read, log }) {
    // The service answers 404 on every SSO call while SAML is off: not worth a call then.
    const samlEnabled = (spec.auth as Record<string, unknown> | undefined)?.saml_enabled === true;
    if (!samlEnabled) return { documents: [] };
    const providers = await read(() => api.listAllSsoProvider(ref, { project: name }), 'sso_providers');
    return { documents: ssoDocuments(providers?.items ?? [], name, log) };
  },
};

type Json = Record<string, unknown>;

/** One document per provider, named after its first domain (domains belong to one provider only). */
function ssoDocuments(providers: ListProvidersResponse['items'], project: string, log: Logger): Json[] {
  const out: Json[] = [];
  for (const provider of providers) {
    const domains = (provider.domains ?? []).map((d) => d.domain?.toLowerCase()).filter((d): d is string => typeof d === 'string' && d !== '');
    if (domains.length === 0) {
      // A provider is matched to its document by domain: one without domains cannot be declared.
      log.warn({ project, provider: provider.id }, 'SSO provider not exported: it has no domains');
      continue;
    }
    const spec: Json = { project, type: 'saml' };
    // The service fetches the document from the URL: the URL is what was declared.
    if (provider.saml?.metadata_url) spec.metadata_url = provider.saml.metadata_url;
    else if (provider.saml?.metadata_xml) spec.metadata_xml = provider.saml.metadata_xml;
    else {
      log.warn({ project, provider: provider.id }, 'SSO provider not exported: the service reports neither a metadata URL nor a metadata document');
      continue;
    }
    spec.domains = domains;
    if (provider.saml?.attribute_mapping) spec.attribute_mapping = provider.saml.attribute_mapping;
    out.push({ apiVersion: API_VERSION, kind: 'SsoProvider', metadata: { name: domains[0] }, spec });
  }
  return out.sort((a, b) => String((a.metadata as Json).name).localeCompare(String((b.metadata as Json).name)));
}
