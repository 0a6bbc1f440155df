import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { API_VERSION } from '../manifests/types.js';

/** Shape of a generated fleet: how many projects and what each manages. */
export interface FleetShape {
  projects: number;
  /** Organization document name. */
  organization?: string;
  /** Secrets per project (0: no Secrets document). */
  secrets?: number;
  /** Functions per project (0: no Function documents). */
  functions?: number;
  /** Configuration sections per project, by ProjectSpec key. */
  sections?: Array<'auth' | 'postgres' | 'restapi' | 'pooler' | 'storage' | 'ssl_enforcement' | 'network_restrictions'>;
  /** Project name prefix. */
  prefix?: string;
  /** Labels of each project (by its index), e.g. to split the fleet between shards. */
  labels?: (index: number) => Record<string, string>;
  /** Adopt an existing organization by this slug instead of finding or creating it by name. */
  organizationSlug?: string;
}

export interface GeneratedFleet {
  dir: string;
  projectNames: string[];
  /** Environment the manifests' references need. */
  env: Record<string, string>;
  /** The fewest requests a no-change pass can make: one project list, one GET per managed section, one list for functions and one for secrets per project. */
  lowerBound: number;
  shape: Required<Omit<FleetShape, 'labels' | 'organizationSlug'>>;
}

const SECTION_VALUES: Record<string, (i: number) => Record<string, unknown>> = {
  auth: (i) => ({ site_url: `https://app-${i}.example.com`, jwt_exp: 3600, disable_signup: false, smtp_pass: { valueFrom: { env: 'FLEET_SMTP_PASS' } } }),
  postgres: (i) => ({ max_connections: 100 + (i % 50), statement_timeout: '30s' }),
  restapi: () => ({ max_rows: 1000, db_schema: 'public,storage' }),
  pooler: () => ({ default_pool_size: 20 }),
  storage: () => ({ fileSizeLimit: 52_428_800 }),
  ssl_enforcement: () => ({ database: true }),
  network_restrictions: () => ({ dbAllowedCidrs: ['10.0.0.0/8'], dbAllowedCidrsV6: [] }),
};

const FUNCTION_SOURCE = (name: string) => `import { greet } from './greet.ts';

Deno.serve((request: Request) => new Response(greet('${name}', new URL(request.url).searchParams.get('who'))));
`;
const GREET_SOURCE = `export function greet(name: string, who: string | null): string {
  return \`\${name} says hello to \${who ?? 'you'}\`;
}
`;

/** Writes a fleet of manifests (and function sources) under `dir`. */
export async function generateFleet(dir: string, shape: FleetShape): Promise<GeneratedFleet> {
  const { labels, organizationSlug, ...rest } = shape;
  const full: GeneratedFleet['shape'] = {
    organization: 'bench-org',
    secrets: 2,
    functions: 1,
    sections: ['auth', 'postgres', 'restapi'],
    prefix: 'svc',
    ...rest,
  };
  await mkdir(join(dir, 'projects'), { recursive: true });
  await mkdir(join(dir, 'functions'), { recursive: true });
  const header = (schema: string) => `# yaml-language-server: $schema=${schema}\n`;
  await writeFile(
    join(dir, 'organization.yaml'),
    header('../schemas/organization.schema.json') + stringify({ apiVersion: API_VERSION, kind: 'Organization', metadata: { name: full.organization }, spec: organizationSlug ? { slug: organizationSlug } : {} }),
  );
  const names: string[] = [];
  const functionNames = Array.from({ length: full.functions }, (_, f) => `fn-${f}`);
  for (const fn of functionNames) {
    await mkdir(join(dir, 'functions', fn), { recursive: true });
    await writeFile(join(dir, 'functions', fn, 'index.ts'), FUNCTION_SOURCE(fn));
    await writeFile(join(dir, 'functions', fn, 'greet.ts'), GREET_SOURCE);
  }
  for (let i = 0; i < full.projects; i++) {
    const name = `${full.prefix}-${String(i).padStart(4, '0')}`;
    names.push(name);
    const spec: Record<string, unknown> = {
      organization: full.organization,
      region: 'eu-central-1',
      db_pass: { valueFrom: { env: 'FLEET_DB_PASS' } },
    };
    for (const section of full.sections) spec[section] = SECTION_VALUES[section]!(i);
    const metadata = labels ? { name, labels: labels(i) } : { name };
    const docs: unknown[] = [{ apiVersion: API_VERSION, kind: 'Project', metadata, spec }];
    if (full.secrets > 0) {
      const values: Record<string, unknown> = {};
      for (let s = 0; s < full.secrets; s++) values[`SECRET_${s}`] = { valueFrom: { env: `FLEET_SECRET_${s}` } };
      docs.push({ apiVersion: API_VERSION, kind: 'Secrets', metadata: { name: `${name}-secrets` }, spec: { project: name, values } });
    }
    for (const fn of functionNames) {
      docs.push({
        apiVersion: API_VERSION,
        kind: 'Function',
        metadata: { name: `${name}-${fn}` },
        spec: { project: name, slug: fn, source: `../functions/${fn}`, entrypoint: 'index.ts', verify_jwt: true },
      });
    }
    await writeFile(join(dir, 'projects', `${name}.yaml`), docs.map((d) => stringify(d)).join('---\n'));
  }
  const env: Record<string, string> = { FLEET_DB_PASS: 'fleet-db-password-0001', FLEET_SMTP_PASS: 'fleet-smtp-password-0001' };
  for (let s = 0; s < full.secrets; s++) env[`FLEET_SECRET_${s}`] = `fleet-secret-value-${s}`;
  const perProject = full.sections.length + (full.functions > 0 ? 1 : 0) + (full.secrets > 0 ? 1 : 0);
  return { dir, projectNames: names, env, lowerBound: 1 + full.projects * perProject, shape: full };
}
