// The corpus of bad manifests: each case is a small tree and the located errors it must give.
import { ORG, PROJECT } from './helpers.js';

export interface ExpectedError {
  file: string;
  line: number;
  column: number;
  path: string;
  message: RegExp;
  hint?: RegExp;
}

export interface CorpusCase {
  name: string;
  files: Record<string, string | Buffer>;
  expected: ExpectedError[];
}

const doc = (kind: string, name: string, spec: string) => `apiVersion: reconciler/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

function nested(depth: number): string {
  let text = '';
  for (let i = 0; i < depth; i++) text += `${'  '.repeat(i + 2)}k${i}:\n`;
  return `${text}${'  '.repeat(depth + 2)}leaf: 1\n`;
}

const billionLaughs = `apiVersion: reconciler/v1
kind: Organization
metadata:
  name: lol
  labels:
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
spec: {}
`;

export const CORPUS: CorpusCase[] = [

  {
    name: 'YAML syntax error: an unclosed flow sequence',
    files: { 'org.yaml': 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: [acme\nspec: {}\n' },
    expected: [{ file: 'org.yaml', line: 5, column: 1, path: '', message: /^YAML syntax: / }],
  },
  {
    name: 'YAML syntax error: a duplicate key',
    files: { 'org.yaml': 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\n  name: acme2\nspec: {}\n' },
    expected: [{ file: 'org.yaml', line: 5, column: 3, path: '', message: /YAML syntax: Map keys must be unique/ }],
  },
  {
    name: 'wrong type: a string where the auth config wants an integer',
    files: { 'org.yaml': ORG, 'project.yaml': `${PROJECT}  auth:\n    jwt_exp: soon\n` },
    expected: [{ file: 'project.yaml', line: 12, column: 14, path: '/spec/auth/jwt_exp', message: /expected an integer or null, got the string `soon`/ }],
  },
  {
    name: 'wrong type: a section given as a list',
    files: { 'org.yaml': ORG, 'project.yaml': `${PROJECT}  pooler:\n    - default_pool_size: 10\n` },
    expected: [{ file: 'project.yaml', line: 12, column: 5, path: '/spec/pooler', message: /expected a mapping, got a list/ }],
  },
  {
    name: 'unknown field without a near name',
    files: { 'org.yaml': doc('Organization', 'acme', '  colour: red\n') },
    expected: [{ file: 'org.yaml', line: 6, column: 3, path: '/spec/colour', message: /unknown field `colour`/, hint: /valid fields: slug, policy/ }],
  },
  {
    name: 'typo in an auth field, with a suggestion',
    files: { 'org.yaml': ORG, 'project.yaml': `${PROJECT}  auth:\n    site_ur: https://shop.example\n` },
    expected: [{ file: 'project.yaml', line: 12, column: 5, path: '/spec/auth/site_ur', message: /unknown field `site_ur`/, hint: /did you mean `site_url`\?/ }],
  },
  {
    name: 'typo in a kind, with a suggestion',
    files: { 'org.yaml': 'apiVersion: reconciler/v1\nkind: Organisation\nmetadata:\n  name: acme\nspec: {}\n' },
    expected: [{ file: 'org.yaml', line: 2, column: 7, path: '/kind', message: /unknown kind `Organisation`/, hint: /did you mean `Organization`\?/ }],
  },
  {
    name: 'typo in an enum value, with a suggestion',
    files: { 'org.yaml': ORG, 'project.yaml': PROJECT.replace('eu-west-1', 'eu-wset-1') },
    expected: [{ file: 'project.yaml', line: 7, column: 11, path: '/spec/region', message: /expected one of the 18 allowed values/, hint: /did you mean `eu-west-1`\?/ }],
  },
  {
    name: 'a document that is not a mapping',
    files: { 'list.yaml': '- apiVersion: reconciler/v1\n- kind: Organization\n' },
    expected: [{ file: 'list.yaml', line: 1, column: 1, path: '', message: /must be a mapping/ }],
  },
  {
    name: 'a misspelt `kind` key',
    files: { 'org.yaml': 'apiVersion: reconciler/v1\nknid: Organization\nmetadata:\n  name: acme\nspec: {}\n' },
    expected: [{ file: 'org.yaml', line: 1, column: 1, path: '', message: /missing required field `kind`/, hint: /is `knid` meant to be `kind`\?/ }],
  },
  {
    name: 'missing required fields',
    files: { 'org.yaml': ORG, 'project.yaml': 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: shop\nspec:\n  organization: acme\n' },
    expected: [{ file: 'project.yaml', line: 6, column: 3, path: '/spec', message: /missing required field `region`/ }],
  },
  {
    name: 'duplicate project names across files',
    files: { 'org.yaml': ORG, 'a.yaml': PROJECT, 'b.yaml': PROJECT },
    expected: [{ file: 'b.yaml', line: 4, column: 9, path: '/metadata/name', message: /duplicate Project `shop`: also defined at a\.yaml:4:9/ }],
  },
  {
    name: 'duplicate function names within one project',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT,
      'fn/index.ts': 'export default {};\n',
      'functions.yaml': [doc('Function', 'hello', '  project: shop\n  source: fn\n  entrypoint: index.ts\n'), doc('Function', 'hello', '  project: shop\n  source: fn\n  entrypoint: index.ts\n')].join('---\n'),
    },
    expected: [
      { file: 'functions.yaml', line: 13, column: 9, path: '/metadata/name', message: /duplicate Function `hello` in project `shop`/ },
    ],
  },
  {
    name: 'dangling references: unknown organization and unknown project, with suggestions',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT.replace('organization: acme', 'organization: acmee'),
      'secrets.yaml': doc('Secrets', 'shop-secrets', '  project: shopp\n  values: {}\n'),
    },
    expected: [
      { file: 'project.yaml', line: 6, column: 17, path: '/spec/organization', message: /unknown organization `acmee`/, hint: /did you mean `acme`\?/ },
      { file: 'secrets.yaml', line: 6, column: 12, path: '/spec/project', message: /unknown project `shopp`/, hint: /did you mean `shop`\?/ },
    ],
  },
  {
    name: 'two Secrets documents for one project',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT,
      'a.yaml': doc('Secrets', 'one', '  project: shop\n  values: {}\n'),
      'b.yaml': doc('Secrets', 'two', '  project: shop\n  values: {}\n'),
    },
    expected: [{ file: 'b.yaml', line: 6, column: 12, path: '/spec/project', message: /a second Secrets document for project `shop`: the first is at a\.yaml:4:9/ }],
  },
  {
    name: 'literal secrets in a secret-bearing auth field and in a Secrets value',
    files: {
      'org.yaml': ORG,
      'project.yaml': `${PROJECT}  auth:\n    smtp_pass: hunter2-canary\n`,
      'secrets.yaml': doc('Secrets', 's', '  project: shop\n  values:\n    API_KEY: canary-literal-value\n'),
    },
    expected: [
      { file: 'project.yaml', line: 12, column: 16, path: '/spec/auth/smtp_pass', message: /a secret must not be a literal: use valueFrom/ },
      { file: 'secrets.yaml', line: 8, column: 14, path: '/spec/values/API_KEY', message: /a secret must not be a literal: use valueFrom/ },
    ],
  },
  {
    name: 'a function whose source lacks its entrypoint and import map',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT,
      'fn/other.ts': 'export {};\n',
      'function.yaml': doc('Function', 'hello', '  project: shop\n  source: fn\n  entrypoint: index.ts\n  import_map: import_map.json\n'),
    },
    expected: [
      { file: 'function.yaml', line: 8, column: 15, path: '/spec/entrypoint', message: /entrypoint `index\.ts` does not exist in the source directory `fn`/ },
      { file: 'function.yaml', line: 9, column: 15, path: '/spec/import_map', message: /import_map `import_map\.json` does not exist/ },
    ],
  },
  {
    name: 'a function whose source directory is missing or outside the checkout',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT,
      'a.yaml': doc('Function', 'a', '  project: shop\n  source: missing\n  entrypoint: index.ts\n'),
      'b.yaml': doc('Function', 'b', '  project: shop\n  source: ../../etc\n  entrypoint: passwd\n'),
    },
    expected: [
      { file: 'a.yaml', line: 7, column: 11, path: '/spec/source', message: /source directory `missing` does not exist/ },
      { file: 'b.yaml', line: 7, column: 11, path: '/spec/source', message: /lies outside the manifests directory/ },
    ],
  },
  {
    name: 'an SSO domain claimed twice, and a provider with both metadata sources',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT,
      'sso.yaml': [
        doc('SsoProvider', 'one', '  project: shop\n  type: saml\n  metadata_url: https://idp.example/metadata\n  domains: [example.com]\n'),
        doc('SsoProvider', 'two', '  project: shop\n  type: saml\n  metadata_url: https://idp2.example/metadata\n  metadata_xml: "<xml/>"\n  domains: [other.example, EXAMPLE.com]\n'),
      ].join('---\n'),
    },
    expected: [
      { file: 'sso.yaml', line: 19, column: 17, path: '/spec/metadata_xml', message: /set exactly one of `metadata_url` or `metadata_xml`, not both/ },
      { file: 'sso.yaml', line: 20, column: 28, path: '/spec/domains/1', message: /SSO domain `EXAMPLE\.com` is claimed twice in project `shop`: also at sso\.yaml:9:13/ },
    ],
  },
  {
    name: 'an SSO provider of a project that disables SAML',
    files: {
      'org.yaml': ORG,
      'project.yaml': `${PROJECT}  auth:\n    saml_enabled: false\n`,
      'sso.yaml': doc('SsoProvider', 'corp', '  project: shop\n  type: saml\n  metadata_url: https://idp.example/metadata\n  domains: [example.com]\n'),
    },
    expected: [{ file: 'sso.yaml', line: 6, column: 12, path: '/spec/project', message: /sets auth\.saml_enabled: false/ }],
  },
  {
    name: 'a branch of a project that disables branching',
    files: {
      'org.yaml': ORG,
      'project.yaml': `${PROJECT}  branching_disabled: true\n`,
      'branch.yaml': doc('Branch', 'preview', '  project: shop\n'),
    },
    expected: [{ file: 'branch.yaml', line: 6, column: 12, path: '/spec/project', message: /sets branching_disabled: true/ }],
  },
  {
    name: 'a binary file',
    files: { 'org.yaml': ORG, 'image.yaml': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]) },
    expected: [{ file: 'image.yaml', line: 1, column: 1, path: '', message: /binary file \(it contains NUL bytes\)/ }],
  },
  {
    name: 'a file that is not UTF-8',
    files: { 'latin1.yaml': Buffer.from('apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: caf\xe9\n', 'latin1') },
    expected: [{ file: 'latin1.yaml', line: 1, column: 1, path: '', message: /not valid UTF-8/ }],
  },
  {
    name: 'deep nesting in block style',
    files: { 'org.yaml': ORG, 'project.yaml': `${PROJECT}  auth:\n${nested(70)}` },
    expected: [{ file: 'project.yaml', line: 74, column: 129, path: '', message: /nesting deeper than 64 levels/ }],
  },
  {
    name: 'deep nesting in flow style (a wall of brackets)',
    files: { 'deep.yaml': `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: x\n  labels: ${'['.repeat(100_000)}${']'.repeat(100_000)}\nspec: {}\n` },
    expected: [{ file: 'deep.yaml', line: 5, column: 267, path: '', message: /nesting deeper than 256 levels of brackets/ }],
  },
  {
    name: 'an alias cycle (a mapping that contains itself) where any value is accepted',
    files: {
      'org.yaml': ORG,
      'project.yaml': PROJECT,
      'sso.yaml': doc('SsoProvider', 'corp', '  project: shop\n  type: saml\n  metadata_url: https://idp.example/metadata\n  domains: [example.com]\n  attribute_mapping:\n    keys:\n      email: &loop\n        default: *loop\n'),
    },
    expected: [{ file: 'sso.yaml', line: 1, column: 1, path: '', message: /aliases form a cycle/ }],
  },
  {
    name: 'an alias bomb (billion laughs)',
    files: { 'lol.yaml': billionLaughs },
    expected: [{ file: 'lol.yaml', line: 1, column: 1, path: '', message: /aliases expand too much/ }],
  },
];

/** Hostile values: prototype keys, control characters, binary scalars. */
export const HOSTILE: CorpusCase = {
  name: 'prototype keys, control characters and binary scalars',
  files: {
    'org.yaml': 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: "a\\u001b[31mred"\nspec:\n  __proto__: {slug: x}\n  slug: !!binary aGVsbG8=\n',
  },
  expected: [
    { file: 'org.yaml', line: 4, column: 9, path: '/metadata/name', message: /^the string `a\\u001b\[31mred` does not match the pattern/ },
    { file: 'org.yaml', line: 6, column: 3, path: '/spec/__proto__', message: /^unknown field `__proto__`$/ },
    { file: 'org.yaml', line: 7, column: 18, path: '/spec/slug', message: /^expected a string, got binary data$/ },
  ],
};
