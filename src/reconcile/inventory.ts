// The inventory: what this tool manages. Deletion works only from it (a project that was
// never in it is never deleted), and the deletion policy recorded here is the one from the
// project's last manifest, so removing a manifest cannot change the policy that applies.
import type { StateStore } from './types.js';

const INVENTORY_KEY = 'inventory';
const INVENTORY_VERSION = 1;

interface InventoryOrganization {
  /** Organization id as the API names it (also used as `organization_id` on create). */
  id: string;
  slug?: string;
  /** Name in the API. */
  name: string;
}

export interface InventoryProject {
  ref: string;
  /** Name in the API. */
  name: string;
  /** Manifest name of its Organization document. */
  organization: string;
  organizationId: string;
  /** From the project's last manifest. */
  deletion: 'orphan' | 'delete';
  management: 'full' | 'observe';
  /** Manifest file it was last declared in. */
  file?: string;
  /**
   * The project's labels when it was last applied (the rollout's selectors read them once its
   * document is gone). Absent in a record written before labels were recorded.
   */
  labels?: Record<string, string>;
  /** How it came under management. */
  origin: 'created' | 'adopted';
  /**
   * The ProjectSet element that made it: the project is pinned to the element's key, so that a
   * changed name template is a blocked rename, never a removal and a creation.
   */
  set?: { name: string; key: string };
  since: number;
}

export interface Inventory {
  version: number;
  updatedAt: number;
  /** By Organization manifest name. */
  organizations: Record<string, InventoryOrganization>;
  /** By Project manifest name. */
  projects: Record<string, InventoryProject>;
}

function emptyInventory(): Inventory {
  return { version: INVENTORY_VERSION, updatedAt: 0, organizations: {}, projects: {} };
}

export class UnsupportedStateError extends Error {
  constructor(readonly key: string, readonly version: unknown) {
    super(`The state file \`${key}.json\` has version ${String(version)}; this build reads version ${INVENTORY_VERSION}`);
    this.name = 'UnsupportedStateError';
  }
}

export async function loadInventory(state: StateStore): Promise<Inventory> {
  const stored = await state.get<Partial<Inventory>>(INVENTORY_KEY);
  if (!stored) return emptyInventory();
  if (stored.version !== INVENTORY_VERSION) throw new UnsupportedStateError(INVENTORY_KEY, stored.version);
  return {
    version: INVENTORY_VERSION,
    updatedAt: stored.updatedAt ?? 0,
    organizations: stored.organizations ?? {},
    projects: withReadableLabels(stored.projects ?? {}),
  };
}

/**
 * Labels that are not a mapping of strings (a hand-edited or damaged record) are dropped: the
 * record then reads as one from before labels were recorded, which the rollout's gates hold
 * under every rule (fail closed), never as labels no selector matches.
 */
function withReadableLabels(projects: Record<string, InventoryProject>): Record<string, InventoryProject> {
  for (const record of Object.values(projects)) {
    const labels: unknown = record.labels;
    if (labels === undefined) continue;
    const readable = typeof labels === 'object' && labels !== null && !Array.isArray(labels) && Object.values(labels).every((value) => typeof value === 'string');
    if (!readable) delete record.labels;
  }
  return projects;
}

export async function saveInventory(state: StateStore, inventory: Inventory, now: number): Promise<void> {
  inventory.updatedAt = now;
  await state.set(INVENTORY_KEY, inventory);
}
