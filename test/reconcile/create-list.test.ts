import { describe, expect, it } from 'vitest';
import { freshListReader } from '../../src/reconcile/kinds/project.js';
import type { LiveProject } from '../../src/reconcile/kinds/project.js';

describe('the project list the creates of a pass share', () => {
  it('serves every create that asked before the read was sent with one read, and never a read sent before a create asked', async () => {
    const sent: number[] = [];
    const answers: Array<(projects: LiveProject[]) => void> = [];
    const read = freshListReader(() => {
      sent.push(sent.length);
      return new Promise<LiveProject[]>((resolve) => answers.push(resolve));
    });
    // Three creates ask in the same turn: one read.
    const first = [read(), read(), read()];
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([0]);
    // A create that asks while that read is on its way waits for the next one.
    const late = read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([0, 1]);
    answers[0]!([{ ref: 'aaaaaaaaaaaaaaaaaaaa' } as LiveProject]);
    answers[1]!([{ ref: 'bbbbbbbbbbbbbbbbbbbb' } as LiveProject]);
    for (const list of await Promise.all(first)) expect(list.map((p) => p.ref)).toEqual(['aaaaaaaaaaaaaaaaaaaa']);
    expect((await late).map((p) => p.ref)).toEqual(['bbbbbbbbbbbbbbbbbbbb']);
  });

  it('hands a failed read to every create that shared it, and the next create reads again', async () => {
    let calls = 0;
    const read = freshListReader(async () => {
      calls += 1;
      if (calls === 1) throw new Error('list failed');
      return [];
    });
    const shared = [read(), read()];
    for (const result of await Promise.allSettled(shared)) expect(result.status).toBe('rejected');
    expect(await read()).toEqual([]);
    expect(calls).toBe(2);
  });
});
