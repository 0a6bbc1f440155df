// Scenario 11: a no-change pass over 1,000 full projects (every configuration section, secrets,
// a function and an SSO provider each: four files per project), and their apply from empty,
// each run by the built command in a process of its own against the emulator with an
// unlimited budget. The figures are that process's own CPU time and peak resident memory
// (process.resourceUsage, written when it exits), so the emulator's work is not counted.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../emulator/index.js';

/** The built command, whether this module runs built (dist/bench) or from source (src/bench, in tests). */
const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const HOOK = new URL('../../dist/bench/usage-hook.js', import.meta.url).href;

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export interface ProcessUsage {
  cpuSeconds: number;
  userSeconds: number;
  systemSeconds: number;
  peakRssMb: number;
  uptimeSeconds: number;
}

export interface FullFleetFigures {
  projects: number;
  files: number;
  yamlMb: number;
  /** The no-change pass: median of the runs, and every run. */
  noChange: { cpuSeconds: number; peakRssMb: number; wallSeconds: number; runs: ProcessUsage[] };
  /** The apply from empty (one run: the fleet exists after it). */
  apply: ProcessUsage;
  goals: { noChangeCpuSeconds: number; noChangePeakRssMb: number; applyPeakRssMb: number };
}

const ENV: Record<string, string> = {
  FULL_DB_PASSWORD: 'full-fleet-db-password-0001',
  FULL_SMTP_PASSWORD: 'full-fleet-smtp-password-0001',
  FULL_IDP05_SECRET: 'full-fleet-idp05-secret-0001',
  FULL_IDP09_SECRET: 'full-fleet-idp09-secret-0001',
  FULL_WEBHOOK_SECRET: 'full-fleet-webhook-secret-0001',
  FULL_MAIL_API_KEY: 'full-fleet-mail-api-key-0001',
  FULL_SENDER_ADDRESS: 'receipts@full-fleet.example',
};

const projectYaml = (name: string, i: number) => `# yaml-language-server: $schema=../schemas/project.schema.json
# Project ${i} of the full fleet: every configuration section, secrets by reference.
apiVersion: reconciler/v1
kind: Project
metadata:
  name: ${name}
  labels:
    environment: ${i % 3 === 0 ? 'production' : 'staging'}
    team: team-${i % 7}
spec:
  organization: full-fleet-org
  region: eu-central-1
  db_pass:
    valueFrom:
      env: FULL_DB_PASSWORD
  auth:
    site_url: https://${name}.full-fleet.example
    uri_allow_list: https://${name}.full-fleet.example/auth/callback,https://admin-${name}.full-fleet.example/auth/callback
    disable_signup: false
    jwt_exp: 3600
    external_email_enabled: true
    mailer_autoconfirm: false
    mailer_secure_email_change_enabled: true
    mailer_otp_exp: 3600
    mailer_subjects_confirmation: Confirm your ${name} account
    mailer_subjects_recovery: Reset your ${name} password
    password_min_length: 12
    password_hibp_enabled: true
    refresh_token_rotation_enabled: true
    security_refresh_token_reuse_interval: 10
    sessions_timebox: 604800
    rate_limit_email_sent: 60
    mfa_totp_enroll_enabled: true
    mfa_totp_verify_enabled: true
    mfa_max_enrolled_factors: 5
    saml_enabled: true
    smtp_host: smtp.mail.full-fleet.example
    smtp_port: "587"
    smtp_user: auth-mailer
    smtp_pass:
      valueFrom:
        env: FULL_SMTP_PASSWORD
    smtp_admin_email: no-reply@full-fleet.example
    smtp_sender_name: ${name}
    smtp_max_frequency: 60
    external_idp05_enabled: true
    external_idp05_client_id: ${i}-shop.apps.idp05.example
    external_idp05_secret:
      valueFrom:
        env: FULL_IDP05_SECRET
    external_idp09_enabled: true
    external_idp09_client_id: ${name}-web
    external_idp09_secret:
      valueFrom:
        env: FULL_IDP09_SECRET
  postgres:
    max_connections: ${100 + (i % 100)}
    statement_timeout: 30s
    work_mem: 8MB
    maintenance_work_mem: 256MB
    track_commit_timestamp: true
  pooler:
    default_pool_size: 30
  restapi:
    db_schema: public,api
    db_extra_search_path: public,extensions
    max_rows: 1000
  storage:
    fileSizeLimit: 52428800
    features:
      imageTransformation:
        enabled: true
      s3Protocol:
        enabled: false
  network_restrictions:
    dbAllowedCidrs:
      - 203.0.113.0/24
      - 198.51.100.${i % 250}/32
    dbAllowedCidrsV6:
      - 2001:db8:4a::/48
  ssl_enforcement:
    database: true
`;

const secretsYaml = (name: string) => `# yaml-language-server: $schema=../schemas/secrets.schema.json
# The function secrets of ${name}.
apiVersion: reconciler/v1
kind: Secrets
metadata:
  name: ${name}-secrets
spec:
  project: ${name}
  values:
    PAYMENT_WEBHOOK_SIGNING_SECRET:
      valueFrom:
        env: FULL_WEBHOOK_SECRET
    RECEIPT_MAIL_API_KEY:
      valueFrom:
        env: FULL_MAIL_API_KEY
    RECEIPT_SENDER_ADDRESS:
      valueFrom:
        env: FULL_SENDER_ADDRESS
`;

const functionYaml = (name: string) => `# yaml-language-server: $schema=../schemas/function.schema.json
# The webhook of ${name}, deployed from the shared source.
apiVersion: reconciler/v1
kind: Function
metadata:
  name: ${name}-webhook
spec:
  project: ${name}
  slug: webhook
  source: ../sources/webhook
  entrypoint: index.ts
  verify_jwt: true
`;

const ssoYaml = (name: string) => `# yaml-language-server: $schema=../schemas/sso-provider.schema.json
# The workforce identity provider of ${name}, matched by its domains.
apiVersion: reconciler/v1
kind: SsoProvider
metadata:
  name: ${name}-workforce
spec:
  project: ${name}
  type: saml
  metadata_url: https://sso.${name}.full-fleet.example/saml/metadata
  domains:
    - ${name}.full-fleet.example
  attribute_mapping:
    keys:
      email:
        name: mail
      name:
        names:
          - displayName
          - cn
      groups:
        name: memberOf
        array: true
`;

const WEBHOOK_SOURCE = `Deno.serve((request: Request) => new Response(\`received \${request.method}\`));
`;

/** Writes the full fleet: an organization and four files per project. */
export async function generateFullFleet(dir: string, projects: number): Promise<{ files: number; bytes: number }> {
  for (const sub of ['projects', 'secrets', 'functions', 'sso', 'sources/webhook']) await mkdir(join(dir, sub), { recursive: true });
  await writeFile(join(dir, 'sources/webhook/index.ts'), WEBHOOK_SOURCE);
  let bytes = 0;
  let files = 0;
  const put = async (path: string, text: string) => {
    bytes += Buffer.byteLength(text);
    files += 1;
    await writeFile(join(dir, path), text);
  };
  await put('organization.yaml', 'apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: full-fleet-org\nspec: {}\n');
  for (let i = 0; i < projects; i++) {
    const name = `full-${String(i).padStart(4, '0')}`;
    await put(`projects/${name}.yaml`, projectYaml(name, i));
    await put(`secrets/${name}.yaml`, secretsYaml(name));
    await put(`functions/${name}.yaml`, functionYaml(name));
    await put(`sso/${name}.yaml`, ssoYaml(name));
  }
  return { files, bytes };
}

interface CommandOptions {
  dir: string;
  stateDir: string;
  emulator: { url: string; token: string };
  dryRun: boolean;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  cwd?: string;
}

/** Runs the built command once and returns its own resource usage. */
export async function runMeasured(options: CommandOptions): Promise<ProcessUsage & { code: number | null; stderr: string }> {
  const usageDir = await mkdtemp(join(tmpdir(), 'reconcile-usage-'));
  const usageFile = join(usageDir, 'usage.json');
  const args = [...(options.nodeFlags ?? []), '--import', HOOK, BIN, options.dir, '--state-dir', options.stateDir, '--rate-limit', '1000000/1s', '--output', 'json', ...(options.dryRun ? ['--dry-run', '--detailed-exitcode'] : [])];
  const measured = new Promise<ProcessUsage & { code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd ?? options.dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, MANAGEMENT_API_URL: options.emulator.url, MANAGEMENT_API_TOKEN: options.emulator.token, BENCH_USAGE_FILE: usageFile, ...ENV },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', async (code) => {
      try {
        const usage = JSON.parse(await readFile(usageFile, 'utf8')) as ProcessUsage;
        resolve({ ...usage, code, stderr });
      } catch (error) {
        reject(new Error(`the command exited ${code} without its usage: ${String(error)}\n${stderr.slice(-2000)}`));
      }
    });
  });
  try {
    return await measured;
  } finally {
    // The command has exited (or never started): nothing writes the usage file any more.
    await rm(usageDir, { recursive: true, force: true });
  }
}

export const FULL_FLEET_GOALS = { noChangeCpuSeconds: 5, noChangePeakRssMb: 200, applyPeakRssMb: 400 };

/** Scenario 11: applies `projects` full projects from empty, then three no-change passes. */
export async function fullFleetPass(options: { projects: number; runs?: number; log?: (message: string) => void; keep?: boolean }): Promise<FullFleetFigures> {
  const log = options.log ?? (() => undefined);
  const root = await mkdtemp(join(tmpdir(), 'reconcile-bench-full-'));
  const dir = join(root, 'manifests');
  const generated = await generateFullFleet(dir, options.projects);
  const emulator = await startEmulator({ port: 0, rateLimit: { limit: 1_000_000, windowMs: 1000 }, speed: 2000 });
  try {
    const stateDir = join(root, 'state');
    const target = { url: emulator.url, token: emulator.token };
    log(`apply ${options.projects} full projects from empty`);
    const applied = await runMeasured({ dir, stateDir, emulator: target, dryRun: false });
    if (applied.code !== 0) throw new Error(`the apply exited ${applied.code}\n${applied.stderr.slice(-3000)}`);
    const runs: ProcessUsage[] = [];
    for (let i = 0; i < (options.runs ?? 3); i++) {
      log(`no-change pass ${i + 1}`);
      const run = await runMeasured({ dir, stateDir, emulator: target, dryRun: true });
      if (run.code !== 0) throw new Error(`the no-change pass exited ${run.code} (2: changes, 1: errors)\n${run.stderr.slice(-3000)}`);
      runs.push(strip(run));
    }
    return {
      projects: options.projects,
      files: generated.files,
      yamlMb: round(generated.bytes / 2 ** 20),
      noChange: { cpuSeconds: round(median(runs.map((r) => r.cpuSeconds))), peakRssMb: Math.round(median(runs.map((r) => r.peakRssMb))), wallSeconds: round(median(runs.map((r) => r.uptimeSeconds))), runs },
      apply: strip(applied),
      goals: FULL_FLEET_GOALS,
    };
  } finally {
    await emulator.close();
    if (!options.keep) await rm(root, { recursive: true, force: true });
  }
}

function strip(usage: ProcessUsage): ProcessUsage {
  return { cpuSeconds: round(usage.cpuSeconds), userSeconds: round(usage.userSeconds), systemSeconds: round(usage.systemSeconds), peakRssMb: Math.round(usage.peakRssMb), uptimeSeconds: round(usage.uptimeSeconds) };
}
