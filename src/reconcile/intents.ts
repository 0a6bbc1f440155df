// Creation intents. `POST /v1/projects` and `POST /v1/organizations` are not idempotent: an
// answer lost on the way back leaves the resource created but unknown to us, and a blind retry
// creates a duplicate. So an intent is written (atomically, before the request is sent) and
// removed only once the created resource is recorded in the inventory. Whoever finds an
// intent (this pass after an error, or the next pass after a crash) looks for the resource by
// name before creating anything.
import type { StateStore } from './types.js';

const INTENTS_KEY = 'intents';

interface ProjectIntent {
  /** Name in the API. */
  name: string;
  organizationId: string;
  region: string;
  sentAt: number;
}

interface OrganizationIntent {
  name: string;
  sentAt: number;
}

interface Intents {
  /** By Project manifest name. */
  projects: Record<string, ProjectIntent>;
  /** By Organization manifest name. */
  organizations: Record<string, OrganizationIntent>;
}

/** The intents of the state directory, with every change written through before it returns. */
export class IntentLog {
  private constructor(
    private readonly state: StateStore,
    private readonly intents: Intents,
  ) {}

  static async open(state: StateStore): Promise<IntentLog> {
    const stored = await state.get<Partial<Intents>>(INTENTS_KEY);
    return new IntentLog(state, { projects: stored?.projects ?? {}, organizations: stored?.organizations ?? {} });
  }

  project(manifestName: string): ProjectIntent | undefined {
    return this.intents.projects[manifestName];
  }

  organization(manifestName: string): OrganizationIntent | undefined {
    return this.intents.organizations[manifestName];
  }

  /** Every pending project intent (the next pass resolves them). */
  pendingProjects(): Array<[string, ProjectIntent]> {
    return Object.entries(this.intents.projects);
  }

  async recordProject(manifestName: string, intent: ProjectIntent): Promise<void> {
    this.intents.projects[manifestName] = intent;
    await this.flush();
  }

  async recordOrganization(manifestName: string, intent: OrganizationIntent): Promise<void> {
    this.intents.organizations[manifestName] = intent;
    await this.flush();
  }

  async clearProject(manifestName: string): Promise<void> {
    if (!(manifestName in this.intents.projects)) return;
    delete this.intents.projects[manifestName];
    await this.flush();
  }

  async clearOrganization(manifestName: string): Promise<void> {
    if (!(manifestName in this.intents.organizations)) return;
    delete this.intents.organizations[manifestName];
    await this.flush();
  }

  /** A write asked for and not started yet: every change made before it starts goes with it. */
  private queued: Promise<void> | undefined;
  private writing: Promise<void> = Promise.resolve();

  private flush(): Promise<void> {
    // Changes made while a write is on its way share the next write instead of queuing one each
    // (a pass creating many projects at once rewrote the whole file per change). Each caller's
    // change is in memory before it asks, and the write it waits for takes its snapshot later.
    if (this.queued) return this.queued;
    const next = this.writing.catch(() => undefined).then(() => {
      this.queued = undefined;
      return this.state.set(INTENTS_KEY, structuredClone(this.intents));
    });
    this.queued = next;
    this.writing = next;
    return next;
  }
}
