import { ROOT_KEY_CHANGE_CONFIRMATION, SECRET_REF } from '../../../manifests/schema-source.js';
import type { CryptoextSpec } from '../../../manifests/types.js';
import { sameSecret } from './hmac-digest.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, sectionSpec, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectCryptoext', key: 'cryptoext' } as const;
const PATH = `${SECTION.key}.root_key`;

/**
 * The encryption root key. Replacing an existing key can make data encrypted under it
 * unreadable, so a change is `blocked` unless the manifest carries the exact confirmation
 * sentence. Setting the key of a project that has none, or that this pass created (its
 * live key is the service's fresh default), needs no confirmation. The key is compared in
 * constant time and never shown.
 */
export const cryptoextConfig: ConfigSection<'ProjectCryptoext'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'vanity_subdomain',
    property: { description: 'The cryptoext root key (a change needs an explicit confirmation).', $ref: '#/$defs/CryptoextSpec' },
    defs: () => ({
      CryptoextSpec: {
        title: 'CryptoextSpec',
        description: 'The cryptoext root key. Changing an existing key can make data encrypted under the old one unreadable, so a change needs `confirm_root_key_change`.',
        type: 'object',
        properties: {
          root_key: { description: 'The root key.', ...SECRET_REF },
          confirm_root_key_change: {
            type: 'string',
            enum: [ROOT_KEY_CHANGE_CONFIRMATION],
            description: `Must equal \`${ROOT_KEY_CHANGE_CONFIRMATION}\` for a change of an existing root key to be applied.`,
          },
        },
        required: ['root_key'],
        additionalProperties: false,
      },
    }),
  },
  services: [],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<CryptoextSpec>(scope, SECTION.key);
    const rootKey = await ctx.resolveSecret(desired.root_key, scope.document);
    if (scope.ref === undefined) {
      return [sectionEntry(scope, SECTION, { action: 'create', changes: [{ path: PATH, sensitive: true }], reason: 'new project: no data is encrypted yet' })];
    }
    const { root_key: live } = await ctx.api.getCryptoextConfig(scope.ref, readOptions(scope, ctx));
    // Hex is case-insensitive: a key spelled in capitals is the same key.
    if (typeof live === 'string' && sameSecret(live.toLowerCase(), rootKey.toLowerCase())) return [sectionEntry(scope, SECTION, { action: 'noop' })];
    const changes = [{ path: PATH, sensitive: true }];
    if (typeof live !== 'string' || live === '') {
      return [sectionEntry(scope, SECTION, { action: 'update', changes, reason: 'the project has no root key yet' })];
    }
    if (ctx.pass.creates(scope.name)) {
      // The live key is the one the service generated moments ago: nothing is encrypted under it.
      return [sectionEntry(scope, SECTION, { action: 'update', changes, reason: 'new project: no data is encrypted yet' })];
    }
    if (desired.confirm_root_key_change !== ROOT_KEY_CHANGE_CONFIRMATION) {
      return [
        sectionEntry(scope, SECTION, {
          action: 'blocked',
          changes,
          reason: `the root key differs from the live one; replacing it can make data encrypted under the old key unreadable. To proceed set confirm_root_key_change: "${ROOT_KEY_CHANGE_CONFIRMATION}"`,
        }),
      ];
    }
    return [sectionEntry(scope, SECTION, { action: 'update', changes, reason: 'root key change confirmed in the manifest' })];
  },
  // The key is resolved again here: it never travels in the entry.
  async apply(_entry, scope, ctx) {
    const desired = sectionSpec<CryptoextSpec>(scope, SECTION.key);
    const rootKey = await ctx.resolveSecret(desired.root_key, scope.document);
    await ctx.api.updateCryptoextConfig(refAtApply(scope, ctx), { root_key: rootKey }, writeOptions(scope, ctx));
  },
  // Deliberately not exported: a reference to fill in would make the next pass propose a
  // root key change, which can make encrypted data unreadable.
  async export() {
    return undefined;
  },
};
