// A live fleet for the export tests: functions with nested files, an import map and static
// patterns, a removed function, SSO providers (by URL and by document, with an attribute
// mapping), and secrets. Branches and the provider given by a metadata document are created
// through the API (`completeFleet`): the service takes that provider's entity id from the document.
import type { ApiClient } from '../../../src/api/client.js';
import type { SeedInput } from '../../../src/emulator/seed.js';
import type { ManualClock } from '../../../src/util/clock.js';

export const CANARY_SECRET = 'canary-export-secret-5c1e9b7a';
export const CANARY_SMTP = 'canary-export-smtp-0f4d2a61';

export const METADATA_XML = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.partner.example/metadata">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/>
</md:EntityDescriptor>
`;

export const HELLO_FILES: Record<string, string> = {
  'index.ts': "import { greet } from './lib/greet.ts';\nDeno.serve(() => new Response(greet('world')));\n",
  'lib/greet.ts': 'export const greet = (name: string) => `hello ${name}`;\n',
  'import_map.json': '{"imports": {}}\n',
  'static/banner.txt': 'banner\n',
};

export const BLOG_HELLO = 'Deno.serve(() => new Response("blog"));\n';

export function exportSeed(): SeedInput {
  return {
    organizations: [{ slug: 'acme', name: 'acme' }],
    projects: [
      {
        name: 'shop',
        organization: 'acme',
        region: 'eu-west-1',
        config: { auth: { saml_enabled: true, site_url: 'https://shop.example', smtp_pass: CANARY_SMTP } },
        secrets: { STRIPE_KEY: CANARY_SECRET },
        functions: [
          {
            slug: 'hello',
            name: 'Hello world',
            verify_jwt: false,
            entrypoint_path: 'index.ts',
            import_map_path: 'import_map.json',
            static_patterns: ['static/*'],
            files: HELLO_FILES,
          },
          { slug: 'webhook', files: { 'main.ts': 'Deno.serve(() => new Response("ok"));\n' }, entrypoint_path: 'main.ts' },
          { slug: 'retired', status: 'REMOVED', files: { 'index.ts': 'export {};\n' } },
        ],
        sso_providers: [
          {
            metadata_url: 'https://idp.acme.example/saml/metadata',
            domains: ['acme.example', 'acme-corp.example'],
            attribute_mapping: { keys: { email: { name: 'mail' }, groups: { names: ['memberOf', 'groups'], array: true } } },
          },
        ],
      },
      {
        name: 'blog',
        organization: 'acme',
        region: 'us-east-1',
        // The same slug as in shop: each project's functions have their own directory.
        functions: [{ slug: 'hello', entrypoint_path: 'index.ts', files: { 'index.ts': BLOG_HELLO } }],
      },
    ],
  };
}

/** What the seed cannot say: branches, and the provider given by its metadata document. */
export async function completeFleet(client: ApiClient, clock: ManualClock): Promise<Record<string, string>> {
  const refs = Object.fromEntries((await client.api.listAllProjects()).map((p) => [p.name, p.ref]));
  await client.api.createASsoProvider(refs.shop!, { type: 'saml', metadata_xml: METADATA_XML, domains: ['partner.example'] });
  // The first branch makes `main` the project's default branch.
  await client.api.createABranch(refs.shop!, { branch_name: 'staging', git_branch: 'develop', persistent: true });
  await client.api.createABranch(refs.shop!, { branch_name: 'preview-42' });
  // Let the branches' set-up finish (emulated minutes, no real waiting).
  await clock.advance(10 * 60_000);
  return refs;
}
