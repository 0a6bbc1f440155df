// The daemon's status page (`GET /`) in headless Chromium (Debian's chromium, driven by
// playwright-core), against the built daemon over a fleet on the emulator: every project with
// its state, a project drifted by an out-of-band change and then its repair, landmarks, table
// headers, labels and contrast, the page without script, the bearer token, and no secret
// anywhere. A screenshot of the drifted fleet is kept in test-artifacts/ (gitignored).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { converge, openFleetHarness } from '../../src/bench/harness.js';
import { assertBuilt, DaemonProcess, REPO } from '../daemon/daemon-process.js';
import { chromiumTool, toolGate } from '../deploy/tools.js';

const STATUS_TOKEN = 'status-page-token-canary-8d2f61a0';
const TRIGGER_TOKEN = 'trigger-token-canary-51c7e9b3';
const ARTIFACTS = join(REPO, 'test-artifacts');
const gate = toolGate(chromiumTool());

let browser: Browser | undefined;
let daemon: DaemonProcess | undefined;
let cleanup: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

interface Row {
  project: string;
  state: string;
  cells: string[];
}

async function rows(page: Page): Promise<Row[]> {
  return page.$$eval('#projects tbody tr', (trs) =>
    trs.map((tr) => ({
      project: tr.getAttribute('data-project') ?? '',
      state: tr.getAttribute('data-state') ?? '',
      cells: [...tr.children].map((cell) => (cell as HTMLElement).innerText.trim()),
    })),
  );
}

/** WCAG contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (rgb: string) => {
    const [r, g, bl] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

describe.skipIf(gate.skip)('the status page in headless Chromium (built daemon, emulator)', () => {
  it('lists every project with its state, shows a drift and its repair, is accessible and holds no secret', async () => {
    assertBuilt();
    const executablePath = gate.assertPresent();
    const harness = await openFleetHarness({ shape: { projects: 3, secrets: 1, functions: 0, sections: ['auth'] }, emulatorRate: { limit: 100_000, windowMs: 60_000 }, clientRate: { limit: 100_000, windowMs: 60_000 } });
    cleanup.push(() => harness.close());
    await converge(harness);
    const work = await mkdtemp(join(tmpdir(), 'reconcile-status-page-'));
    cleanup.push(() => rm(work, { recursive: true, force: true }));
    const statusTokenFile = join(work, 'status-token');
    const triggerTokenFile = join(work, 'trigger-token');
    await writeFile(statusTokenFile, `${STATUS_TOKEN}\n`);
    await writeFile(triggerTokenFile, `${TRIGGER_TOKEN}\n`);
    const stateDir = join(work, 'state');
    const env = { MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_LOG_FORMAT: 'json', ...harness.fleet.env };
    const startDaemon = (extra: string[]) =>
      new DaemonProcess(
        [harness.fleet.dir, '--watch', ...extra, '--metrics-addr', '127.0.0.1:0', '--state-dir', stateDir, '--resync', '0 0 1 1 *', '--observe', 'none', '--rate-limit', '1000/1s', '--status-token-file', statusTokenFile, '--trigger-token-file', triggerTokenFile, '--runbook-url', 'https://git.example.com/ops/fleet/blob/main/docs/runbook.md'],
        env,
      );

    // First a daemon that only reports drift (--dry-run), then one that repairs it.
    daemon = startDaemon(['--dry-run']);
    const url = await daemon.metricsUrl();
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');

    const refused = await fetch(`${url}/`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('Bearer');
    expect((await fetch(`${url}/status`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);

    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${STATUS_TOKEN}` }, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const seen: string[] = [];
    const load = async () => {
      const answer = await page.goto(`${url}/`);
      expect(answer?.status()).toBe(200);
      seen.push(await page.content());
      return rows(page);
    };

    const names = harness.fleet.projectNames;
    const first = await load();
    expect(first.map((r) => r.project).sort()).toEqual([...names].sort());
    expect(first.every((r) => r.state === 'in_sync' && r.cells[1]!.startsWith('in sync'))).toBe(true);

    // Landmarks, headings, table headers, labels.
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    for (const landmark of ['header', 'nav', 'main', 'footer']) expect(await page.locator(landmark).count(), landmark).toBe(1);
    expect(await page.locator('h1').innerText()).toBe('Fleet status');
    const tables = await page.$$eval('table', (all) => all.map((t) => ({ caption: !!t.querySelector('caption'), cols: t.querySelectorAll('thead th[scope="col"]').length, rowHeaders: t.querySelectorAll('tbody th[scope="row"]').length, rows: t.querySelectorAll('tbody tr').length })));
    for (const table of tables) {
      expect(table.caption).toBe(true);
      expect(table.cols).toBeGreaterThan(0);
    }
    expect(tables[0]!.rowHeaders).toBe(names.length);
    const unlabelled = await page.$$eval('input', (inputs) => inputs.filter((input) => !document.querySelector(`label[for="${input.id}"]`)).length);
    expect(unlabelled).toBe(0);
    expect(await page.locator('#auto-refresh').isEnabled()).toBe(true);
    // Text contrast of every state and of the body against the page (WCAG AA: 4.5).
    const colours = await page.$$eval('.state, body, a', (elements) => elements.map((e) => getComputedStyle(e).color));
    const background = await page.$eval('body', (body) => getComputedStyle(body).backgroundColor);
    for (const colour of colours) expect(contrast(colour, background), colour).toBeGreaterThanOrEqual(4.5);
    expect(await page.locator('footer a[href$="#reconcilerdriftpersists"]').count()).toBe(1);

    // An out-of-band change to one project, found by a pass of the dry-run daemon.
    const target = names[1]!;
    const refs = await harness.refs();
    const changed = await fetch(`${harness.emulator.url}/v1/projects/${refs.get(target)}/config/auth`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${harness.emulator.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ site_url: 'https://changed-out-of-band.example.com' }),
    });
    expect(changed.ok).toBe(true);
    const from = daemon.lines.length;
    const triggered = await fetch(`${url}/reconcile`, { method: 'POST', headers: { authorization: `Bearer ${TRIGGER_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ projects: [target] }) });
    expect(triggered.status).toBe(202);
    await daemon.waitFor((l) => l.msg === 'pass finished' && Array.isArray(l.projects), { from });
    const drifted = await load();
    expect(drifted.find((r) => r.project === target)).toMatchObject({ state: 'drifted' });
    expect(drifted.filter((r) => r.project !== target).every((r) => r.state === 'in_sync')).toBe(true);
    expect(await page.locator('#summary').innerText()).toContain('1 drifted');
    const pending = await page.$$eval('#pending-table tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).innerText));
    expect(pending.join('\n')).toContain(target);
    expect(pending.join('\n')).toContain('dry-run');
    expect(await page.locator(`tr[data-project="${target}"] a[href$="#reconcilerdriftpersists"]`).count()).toBe(1);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'status-page-drifted.png'), fullPage: true });

    // Without script the page is the same server-rendered document.
    const plain = await browser.newContext({ javaScriptEnabled: false, extraHTTPHeaders: { authorization: `Bearer ${STATUS_TOKEN}` } });
    const plainPage = await plain.newPage();
    await plainPage.goto(`${url}/`);
    expect((await rows(plainPage)).find((r) => r.project === target)?.state).toBe('drifted');
    expect(await plainPage.locator('#auto-refresh').isDisabled()).toBe(true);
    await plain.close();

    // The repairing daemon, on the same state directory: its first pass writes the manifest's value back.
    expect(await daemon.stop()).toBe(0);
    seen.push(daemon.stdout, daemon.stderr);
    daemon = startDaemon([]);
    const url2 = await daemon.metricsUrl();
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');
    const page2 = await context.newPage();
    const answer = await page2.goto(`${url2}/`);
    expect(answer?.status()).toBe(200);
    seen.push(await page2.content());
    const repaired = await rows(page2);
    expect(repaired.map((r) => [r.project, r.state])).toEqual([...names].sort().map((name) => [name, 'in_sync']));
    expect(await page2.locator('#pending-table').count()).toBe(0);
    // Sections for rollouts and held changes appear only with such data.
    expect(await page2.locator('#rollouts, #waiting').count()).toBe(0);
    await page2.screenshot({ path: join(ARTIFACTS, 'status-page-repaired.png'), fullPage: true });
    const json = await fetch(`${url2}/status`, { headers: { authorization: `Bearer ${STATUS_TOKEN}` } });
    seen.push(await json.text());
    expect(await daemon.stop()).toBe(0);
    seen.push(daemon.stdout, daemon.stderr);

    const canaries = [STATUS_TOKEN, TRIGGER_TOKEN, harness.emulator.token, ...Object.values(harness.fleet.env)];
    for (const text of seen) for (const canary of canaries) expect(text).not.toContain(canary);
  }, 180_000);
});
