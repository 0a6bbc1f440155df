import { PRIORITIES, type Priority } from './request.js';

interface Lane<T> {
  /** Projects in round-robin order; the head is served next. */
  order: string[];
  byProject: Map<string, T[]>;
  size: number;
}

/**
 * Waiting work, ordered: every `write` before any `verify` before any `drift`; within one
 * priority, projects take turns (one item each, round-robin) so a large project cannot starve
 * a small one; within one project, first in, first out.
 */
export class PriorityScheduler<T> {
  readonly #lanes = new Map<Priority, Lane<T>>(
    PRIORITIES.map((priority) => [priority, { order: [], byProject: new Map(), size: 0 }]),
  );

  get size(): number {
    let total = 0;
    for (const lane of this.#lanes.values()) total += lane.size;
    return total;
  }

  depth(priority: Priority): number {
    return this.#lane(priority).size;
  }

  /** Adds an item at the back of its project's line (`front`: at the front, for a retry). */
  push(item: T, priority: Priority, project: string, front = false): void {
    const lane = this.#lane(priority);
    let items = lane.byProject.get(project);
    if (!items) {
      items = [];
      lane.byProject.set(project, items);
      lane.order.push(project);
    }
    if (front) items.unshift(item);
    else items.push(item);
    lane.size += 1;
  }

  /** The next item, left in place, or undefined when nothing waits. */
  peek(): T | undefined {
    for (const priority of PRIORITIES) {
      const lane = this.#lane(priority);
      if (lane.size === 0) continue;
      return lane.byProject.get(lane.order[0]!)![0];
    }
    return undefined;
  }

  /** Takes the next item, or undefined when nothing waits. */
  shift(): { item: T; priority: Priority } | undefined {
    for (const priority of PRIORITIES) {
      const lane = this.#lane(priority);
      if (lane.size === 0) continue;
      const project = lane.order.shift()!;
      const items = lane.byProject.get(project)!;
      const item = items.shift()!;
      lane.size -= 1;
      if (items.length > 0) lane.order.push(project);
      else lane.byProject.delete(project);
      return { item, priority };
    }
    return undefined;
  }

  /** Takes out every waiting item `matches` accepts (the calls of an aborted signal), in no particular order. */
  removeWhere(matches: (item: T) => boolean): Array<{ item: T; priority: Priority }> {
    const removed: Array<{ item: T; priority: Priority }> = [];
    for (const priority of PRIORITIES) {
      const lane = this.#lane(priority);
      for (const [project, items] of [...lane.byProject]) {
        const kept: T[] = [];
        for (const item of items) {
          if (matches(item)) removed.push({ item, priority });
          else kept.push(item);
        }
        if (kept.length === items.length) continue;
        lane.size -= items.length - kept.length;
        if (kept.length > 0) {
          items.length = 0;
          for (const item of kept) items.push(item);
        } else {
          lane.byProject.delete(project);
        }
      }
      // Projects left with nothing leave the turn order, the others keep their places (one pass).
      if (lane.order.length !== lane.byProject.size) {
        const order = lane.order.filter((project) => lane.byProject.has(project));
        lane.order.length = 0;
        for (const project of order) lane.order.push(project);
      }
    }
    return removed;
  }

  #lane(priority: Priority): Lane<T> {
    const lane = this.#lanes.get(priority);
    if (!lane) throw new TypeError(`Expected \`priority\` to be one of ${PRIORITIES.join(', ')}, got \`${String(priority)}\``);
    return lane;
  }
}
