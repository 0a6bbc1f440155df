// The built daemon (`--watch --sandbox --webhook-secret-file`) flooded with sixty concurrent
// 5 MiB wrongly signed webhook bodies: its memory stays flat (the bodies are hashed as they
// stream in, never held whole, and at most a few are read at once), and it still answers.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonProcess, assertBuilt } from './daemon-process.js';

let daemon: DaemonProcess | undefined;
let work: string | undefined;

afterAll(async () => {
  await daemon?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** Resident memory of a process, bytes (VmRSS of /proc/PID/status). */
async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** Sends the whole body; resolves with the answer's status, or 0 when the daemon closed the connection first. */
function postBody(url: URL, body: Buffer): Promise<number> {
  return new Promise((resolvePost) => {
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), 'x-hub-signature-256': `sha256=${'0'.repeat(64)}`, 'x-github-event': 'push' },
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolvePost(response.statusCode ?? 0));
      response.on('error', () => resolvePost(response.statusCode ?? 0));
    });
    request.on('error', () => resolvePost(0));
    request.end(body);
  });
}

const MiB = 1024 * 1024;

describe('a flood of unauthenticated webhook bodies (built command)', () => {
  it('sixty concurrent 5 MiB wrongly signed bodies grow the daemon by less than 64 MiB and start nothing', async () => {
    assertBuilt();
    work = await mkdtemp(join(tmpdir(), 'reconciler-flood-e2e-'));
    const manifests = join(work, 'manifests');
    await mkdir(manifests);
    await writeFile(join(manifests, 'organization.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: acme\nspec: {}\n');
    await writeFile(join(work, 'secret'), 'flood-webhook-secret-0b1c\n');
    daemon = new DaemonProcess(
      [manifests, '--watch', '--sandbox', '--metrics-addr', '127.0.0.1:0', '--state-dir', join(work, 'state'), '--webhook-secret-file', join(work, 'secret'), '--resync', '0 0 1 1 *'],
      {},
    );
    const url = new URL(`${await daemon.metricsUrl()}/reconcile/webhook`);
    await daemon.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('pass finished'));
    const before = await rss(daemon.pid);

    // The body is built once, in this process; the daemon's memory is sampled while it arrives.
    const body = Buffer.alloc(5 * MiB, 'a');
    let peak = before;
    let flooding = true;
    const sampler = (async () => {
      while (flooding) {
        peak = Math.max(peak, await rss(daemon!.pid));
        await new Promise((resolveTick) => setTimeout(resolveTick, 5));
      }
    })();
    const statuses = await Promise.all(Array.from({ length: 60 }, () => postBody(url, body)));
    flooding = false;
    await sampler;
    peak = Math.max(peak, await rss(daemon.pid));

    // Each was refused: wrongly signed (403), or not read at all (503, or the connection closed).
    expect(statuses.every((status) => status === 403 || status === 503 || status === 0), statuses.join(',')).toBe(true);
    expect(statuses.some((status) => status === 403)).toBe(true);
    expect(peak - before, `grew from ${before} to ${peak}`).toBeLessThan(64 * MiB);
    expect(daemon.lines.filter((l) => l.msg === 'push received' || l.msg === 'on-demand reconcile')).toEqual([]);
    // Still serving.
    expect((await fetch(new URL('/healthz', url))).status).toBe(200);
    expect(await daemon.stop()).toBe(0);
  });
});
