// The identity rules as a property: over random sequences of manifest edits (rename, move to
// another organization, delete, re-add, deletion policy changes) and passes, against the
// emulator, no live project is ever deleted unless its document was removed while the policy
// of its last reconciled manifest was `deletion: delete`, and no pass creates a second project
// of a name while the first one is still declared.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startHarness, type Harness } from './helpers/fleet.js';

const KEYS = [0, 1, 2] as const;
type Key = (typeof KEYS)[number];

type Command =
  | { op: 'rename' | 'move' | 'delete' | 'readd' | 'policy'; key: Key }
  | { op: 'pass' };

interface Logical {
  manifest: string;
  renames: number;
  org: 'acme' | 'beta';
  deletion: 'orphan' | 'delete';
  present: boolean;
  /** The deletion policy of the manifest the last pass saw while the document was present. */
  reconciledDeletion?: 'orphan' | 'delete';
}

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constantFrom('rename', 'move', 'delete', 'readd', 'policy') as fc.Arbitrary<'rename' | 'move' | 'delete' | 'readd' | 'policy'>, key: fc.constantFrom(...KEYS) }),
  fc.constant({ op: 'pass' as const }),
);

const organizations = ['acme', 'beta'].map((name) => `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: ${name}\nspec: {}\n`).join('---\n');

function document(key: Key, model: Logical): string {
  return [
    'apiVersion: reconciler/v1',
    'kind: Project',
    'metadata:',
    `  name: ${model.manifest}`,
    'spec:',
    `  name: lp-${key}`,
    `  organization: ${model.org}`,
    '  region: eu-west-1',
    '  policy:',
    `    deletion: ${model.deletion}`,
    '',
  ].join('\n');
}

async function check(commands: Command[]): Promise<void> {
  const h: Harness = await startHarness();
  try {
    const models = new Map<Key, Logical>(KEYS.map((key) => [key, { manifest: `p${key}`, renames: 0, org: 'acme', deletion: 'delete', present: true }]));
    const sync = async () => {
      await h.write({ 'organizations.yaml': organizations });
      for (const key of KEYS) {
        const model = models.get(key)!;
        // A renamed document stays in its file: the old name is gone with it.
        if (model.present) await h.write({ [`p${key}.yaml`]: document(key, model) });
        else await h.remove(`p${key}.yaml`);
      }
    };
    const pass = async () => {
      await sync();
      const before = await h.client.api.listAllProjects();
      const since = h.emulator.requests().length;
      const result = await h.pass();
      expect(result.result).not.toBe('invalid');
      const deleted = h.emulator.requests().slice(since).filter((r) => r.method === 'DELETE' && r.route === '/v1/projects/{ref}');
      for (const request of deleted) {
        const ref = request.path.split('/').pop()!;
        const project = before.find((p) => p.ref === ref)!;
        const key = Number(project.name.slice('lp-'.length)) as Key;
        const model = models.get(key)!;
        expect({ deleted: project.name, present: model.present, reconciled: model.reconciledDeletion }).toEqual({ deleted: project.name, present: false, reconciled: 'delete' });
      }
      // Never a second live project of one name in one organization.
      const after = (await h.client.api.listAllProjects()).filter((p) => p.status !== 'REMOVED');
      const seen = after.map((p) => `${p.organization_id}/${p.name}`);
      expect(new Set(seen).size).toBe(seen.length);
      for (const model of models.values()) if (model.present) model.reconciledDeletion = model.deletion;
    };

    await pass();
    for (const step of commands) {
      if (step.op === 'pass') {
        await pass();
        continue;
      }
      const model = models.get(step.key)!;
      if (step.op === 'rename' && model.present) model.manifest = `p${step.key}r${++model.renames}`;
      if (step.op === 'move' && model.present) model.org = model.org === 'acme' ? 'beta' : 'acme';
      if (step.op === 'delete') model.present = false;
      if (step.op === 'readd') model.present = true;
      if (step.op === 'policy') model.deletion = model.deletion === 'delete' ? 'orphan' : 'delete';
    }
    await pass();
  } finally {
    await h.close();
  }
}

describe('identity rules (property, against the emulator)', () => {
  it('deletes a live project only when its document was removed under deletion: delete', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 3, maxLength: 8 }), (commands) => check(commands)),
      { seed: 20240611, numRuns: 16, endOnFailure: true },
    );
  }, 120_000);
});
