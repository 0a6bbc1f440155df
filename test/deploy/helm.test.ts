// The Helm chart: lint, render with default and full values, validate every object, and
// check that the pod really carries the security settings, probes, volumes and wiring.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_REFRESH_TOKEN_FILE, OAUTH_ENV, tokenSourceFromEnvironment } from '../../src/api/auth.js';
import { parseCommandLine } from '../../src/cli/main.js';
import { OPTIONS } from '../../src/cli/options.js';
import { REQUIRED_VALUES, findObject, parseManifests, renderObjects, runHelm, template, typecheckWithModels, validateWithModel, type K8sObject } from './render.js';
import { ALERTS_FILE, CHART_DIR, DASHBOARD_FILE, helmTool, toolGate } from './tools.js';
import { INTERFACE_ENV } from './metrics-catalogue.js';
import { TABLE_BEGIN, TABLE_END, valuesRows, valuesTable } from './values-doc.js';

const FULL_VALUES = join(import.meta.dirname, 'full-values.yaml');
const gate = toolGate(helmTool());

interface Deployment extends K8sObject {
  spec: { replicas: number; strategy: { type: string }; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: IPodSpec } };
}

function container(pod: IPodSpec, name: string): IContainer {
  const found = [...pod.containers, ...(pod.initContainers ?? [])].find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

function envOf(c: IContainer): Record<string, { value?: string; secret?: { name: string; key: string } }> {
  return Object.fromEntries(
    (c.env ?? []).map((e) => [e.name, { value: e.value, secret: e.valueFrom?.secretKeyRef ? { name: e.valueFrom.secretKeyRef.name!, key: e.valueFrom.secretKeyRef.key } : undefined }]),
  );
}

function mountOf(c: IContainer, volume: string) {
  return (c.volumeMounts ?? []).find((m) => m.name === volume);
}

/** The restrictive settings both containers must carry. */
function expectRestricted(c: IContainer) {
  const sc = c.securityContext;
  expect(sc, `${c.name} securityContext`).toBeDefined();
  expect(sc!.runAsNonRoot).toBe(true);
  expect(sc!.readOnlyRootFilesystem).toBe(true);
  expect(sc!.allowPrivilegeEscalation).toBe(false);
  expect(sc!.capabilities?.drop).toEqual(['ALL']);
  expect(sc!.capabilities?.add ?? []).toEqual([]);
  expect(sc!.privileged ?? false).toBe(false);
  expect(sc!.seccompProfile?.type).toBe('RuntimeDefault');
  expect(sc!.runAsUser).toBeGreaterThan(0);
}

/** Every mount names a declared volume; no container writes outside its volumes. */
function expectMountsDeclared(pod: IPodSpec) {
  const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    for (const m of c.volumeMounts ?? []) expect(volumes.has(m.name), `${c.name} mounts undeclared volume ${m.name}`).toBe(true);
  }
}

describe.skipIf(gate.skip)('helm chart', () => {
  let helm: string;
  let defaults: K8sObject[];
  let full: K8sObject[];

  beforeAll(() => {
    helm = gate.assertPresent();
    defaults = renderObjects(helm, {});
    full = renderObjects(helm, { valuesFiles: [FULL_VALUES] });
  });

  it('passes helm lint --strict with default and with full values', () => {
    for (const extra of [[], ['--values', FULL_VALUES]]) {
      const result = runHelm(helm, ['lint', '--strict', CHART_DIR, '--values', REQUIRED_VALUES, ...extra]);
      expect(result.status, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain('0 chart(s) failed');
    }
  });

  it('packages with the dashboard and alert files, and the package renders them', () => {
    const out = mkdtempSync(join(tmpdir(), 'reconciler-chart-'));
    try {
      const packaged = runHelm(helm, ['package', CHART_DIR, '--destination', out]);
      expect(packaged.status, packaged.stderr).toBe(0);
      const archive = join(out, 'reconciler-0.1.0.tgz');
      const listing = spawnSync('tar', ['-tzf', archive], { encoding: 'utf8' }).stdout.split('\n');
      for (const file of ['reconciler/dashboards/reconciler.json', 'reconciler/alerts/reconciler-rules.yaml', 'reconciler/values.schema.json', 'reconciler/README.md', 'reconciler/templates/NOTES.txt']) expect(listing).toContain(file);
      const rendered = runHelm(helm, ['template', 'reconciler', archive, '--values', REQUIRED_VALUES, '--set', 'prometheusRule.enabled=true', '--set', 'grafanaDashboard.enabled=true']);
      expect(rendered.status, rendered.stderr).toBe(0);
      const kinds = parseManifests(rendered.stdout).map((o) => o.kind);
      expect(kinds).toEqual(expect.arrayContaining(['PrometheusRule', 'ConfigMap']));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('renders the expected objects', () => {
    // The Secret is the status view's generated token (statusView.generateToken).
    expect(defaults.map((o) => o.kind).sort()).toEqual(['Deployment', 'PersistentVolumeClaim', 'Secret', 'Service', 'ServiceAccount']);
    expect(full.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'NetworkPolicy', 'PersistentVolumeClaim', 'PrometheusRule', 'Secret', 'Service', 'ServiceAccount', 'ServiceMonitor']);
    const withToken = renderObjects(helm, { set: ['api.token.value=pat-canary-0123'] });
    expect(withToken.map((o) => o.kind)).toContain('Secret');
  });

  it('renders objects that validate against the Kubernetes and prometheus-operator models', async () => {
    const withToken = renderObjects(helm, { set: ['api.token.value=pat-canary-0123'] });
    const all = [...defaults, ...full, ...withToken];
    for (const object of all) {
      await expect(validateWithModel(object), `${object.kind}/${object.metadata.name}`).resolves.toBeUndefined();
    }
    // An invalid object is rejected, so the loop above can fail.
    const broken = structuredClone(findObject<Deployment>(defaults, 'Deployment'));
    (broken.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'metrics';
    await expect(validateWithModel(broken)).rejects.toThrow(/containerPort/);
  });

  it('renders no field the Kubernetes and prometheus-operator types do not define', () => {
    const withToken = renderObjects(helm, { set: ['api.token.value=pat-canary-0123'] });
    const result = typecheckWithModels([...defaults, ...full, ...withToken.filter((o) => o.kind === 'Secret')]);
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
    // A misspelt field is caught.
    const typo = structuredClone(findObject<Deployment>(defaults, 'Deployment'));
    (typo.spec.template.spec.containers[0]!.securityContext as Record<string, unknown>).readOnlyRootFileSystem = true;
    const rejected = typecheckWithModels([typo]);
    expect(rejected.status).not.toBe(0);
    expect(rejected.output).toContain('readOnlyRootFileSystem');
  }, 120_000);

  it('runs one replica with the Recreate strategy', () => {
    const deployment = findObject<Deployment>(defaults, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
  });

  it('gives both containers a restrictive security context, and the pod no API token', () => {
    for (const objects of [defaults, full]) {
      const pod = findObject<Deployment>(objects, 'Deployment').spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.enableServiceLinks).toBe(false);
      expect(pod.containers.map((c) => c.name)).toEqual(['reconciler', 'git-sync']);
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) expectRestricted(c);
      expect(container(pod, 'reconciler').securityContext!.runAsUser).toBe(10001);
      const serviceAccount = findObject(objects, 'ServiceAccount');
      expect(serviceAccount.automountServiceAccountToken).toBe(false);
      expect(pod.serviceAccountName).toBe(serviceAccount.metadata.name);
    }
  });

  it('probes /healthz and /readyz on the metrics port, which the Service exposes', () => {
    const deployment = findObject<Deployment>(defaults, 'Deployment');
    const reconciler = container(deployment.spec.template.spec, 'reconciler');
    expect(reconciler.ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);
    expect(reconciler.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(reconciler.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(reconciler.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(envOf(reconciler).RECONCILE_METRICS_ADDR?.value).toBe('0.0.0.0:9464');
    const service = findObject(defaults, 'Service') as K8sObject & { spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] } };
    expect(service.spec.ports).toEqual([
      { name: 'metrics', port: 9464, targetPort: 'metrics', protocol: 'TCP' },
      { name: 'gitsync-metrics', port: 2112, targetPort: 'gitsync-metrics', protocol: 'TCP' },
    ]);
    for (const [key, value] of Object.entries(service.spec.selector)) expect(deployment.spec.template.metadata.labels[key]).toBe(value);
    expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
  });

  it('publishes the git-sync checkout into a shared emptyDir that the reconciler watches', () => {
    const pod = findObject<Deployment>(defaults, 'Deployment').spec.template.spec;
    expectMountsDeclared(pod);
    const reconciler = container(pod, 'reconciler');
    const gitSync = container(pod, 'git-sync');
    const init = container(pod, 'git-sync-init');
    expect(pod.volumes!.find((v) => v.name === 'git')?.emptyDir).toEqual({});
    expect(mountOf(reconciler, 'git')).toEqual({ name: 'git', mountPath: '/git', readOnly: true });
    expect(mountOf(gitSync, 'git')?.mountPath).toBe('/git');
    expect(mountOf(init, 'git')?.mountPath).toBe('/git');
    expect(gitSync.args).toEqual(expect.arrayContaining(['--repo=https://git.example.com/platform/fleet-manifests.git', '--ref=main', '--root=/git', '--link=repo', '--period=30s', '--stale-worktree-timeout=10m', '--max-failures=-1', '--http-bind=:2112', '--http-metrics']));
    expect(init.args).toContain('--one-time');
    expect(reconciler.args!.slice(0, 2)).toEqual(['/git/repo', '--watch']);
    expect(reconciler.args).not.toContain('--dry-run');
  });

  it('keeps state on a claim by default (emptyDir when persistence is off), /tmp on an emptyDir, the state directory in RECONCILE_STATE_DIR', () => {
    const pod = findObject<Deployment>(defaults, 'Deployment').spec.template.spec;
    const reconciler = container(pod, 'reconciler');
    const env = envOf(reconciler);
    // A rescheduled pod finds its inventory and creation intents on the claim.
    const claim = findObject(defaults, 'PersistentVolumeClaim');
    expect(claim.metadata.name).toBe('reconciler-state');
    expect(pod.volumes!.find((v) => v.name === 'state')?.persistentVolumeClaim?.claimName).toBe('reconciler-state');
    const ephemeral = findObject<Deployment>(renderObjects(helm, { set: ['persistence.enabled=false'] }), 'Deployment').spec.template.spec;
    expect(ephemeral.volumes!.find((v) => v.name === 'state')?.emptyDir).toEqual({});
    expect(mountOf(reconciler, 'state')?.mountPath).toBe('/var/lib/reconciler');
    expect(env.RECONCILE_STATE_DIR?.value).toBe('/var/lib/reconciler');
    expect(pod.volumes!.find((v) => v.name === 'tmp')?.emptyDir).toEqual({});
    expect(mountOf(reconciler, 'tmp')?.mountPath).toBe('/tmp');
    expect(mountOf(container(pod, 'git-sync'), 'git-sync-tmp')?.mountPath).toBe('/tmp');
    // Every environment variable the chart sets is one the command reads.
    const known = new Set([...Object.values(OPTIONS).map((o) => o.env).filter(Boolean), ...INTERFACE_ENV, 'MANAGEMENT_API_TOKEN', ...Object.values(OAUTH_ENV), 'TMPDIR']);
    for (const name of Object.keys(env)) expect(known.has(name), `${name} is read by the command`).toBe(true);
    expect(env.RECONCILE_RATE_LIMIT?.value).toBe('45/60s');
    expect(env.RECONCILE_RESYNC?.value).toBe('*/10 * * * *');
    expect(env.RECONCILE_LOG_LEVEL?.value).toBe('info');
  });

  it('mounts the API token as a file the reconciler re-reads (never an environment value)', () => {
    const pod = findObject<Deployment>(defaults, 'Deployment').spec.template.spec;
    const reconciler = container(pod, 'reconciler');
    const env = envOf(reconciler);
    expect(env.MANAGEMENT_API_TOKEN).toBeUndefined();
    const tokenMount = mountOf(reconciler, 'api-token')!;
    expect(env.MANAGEMENT_API_TOKEN_FILE?.value).toBe(`${tokenMount.mountPath}/token`);
    expect(tokenMount.readOnly).toBe(true);
    const volume = pod.volumes!.find((v) => v.name === 'api-token')!;
    expect(volume.secret?.secretName).toBe('reconciler-api-token');
    expect(volume.secret?.items).toEqual([{ key: 'token', path: 'token' }]);

    // A chart-created Secret holds the value base64-encoded. Rotating it changes the Secret
    // only, not the pod template: the running daemon re-reads the file, no restart.
    const withToken = renderObjects(helm, { set: ['api.token.value=pat-canary-0123'] });
    const secret = findObject(withToken, 'Secret', 'reconciler-api-token') as K8sObject & { data: Record<string, string> };
    expect(secret.metadata.name).toBe('reconciler-api-token');
    expect(Buffer.from(secret.data.token!, 'base64').toString()).toBe('pat-canary-0123');
    const rotated = renderObjects(helm, { set: ['api.token.value=pat-canary-4567'] });
    expect(findObject(rotated, 'Secret', 'reconciler-api-token')).not.toEqual(secret);
    expect(findObject<Deployment>(rotated, 'Deployment').spec.template).toEqual(findObject<Deployment>(withToken, 'Deployment').spec.template);
    // The value appears nowhere but in the Secret.
    const deploymentText = JSON.stringify(findObject(withToken, 'Deployment'));
    expect(deploymentText).not.toContain('pat-canary-0123');

    // An existing Secret is referenced, not created.
    const existing = renderObjects(helm, { set: ['api.token.existingSecret=my-token', 'api.token.secretKey=pat'] });
    expect(existing.some((o) => o.kind === 'Secret' && o.metadata.name.endsWith('-api-token'))).toBe(false);
    const existingVolume = findObject<Deployment>(existing, 'Deployment').spec.template.spec.volumes!.find((v) => v.name === 'api-token')!;
    expect(existingVolume.secret).toMatchObject({ secretName: 'my-token', items: [{ key: 'pat', path: 'token' }] });
  });

  it('full values: OAuth from a Secret, the rotated refresh token on the persistent state volume', () => {
    const deployment = findObject<Deployment>(full, 'Deployment');
    const pod = deployment.spec.template.spec;
    expectMountsDeclared(pod);
    const reconciler = container(pod, 'reconciler');
    const env = envOf(reconciler);
    expect(env.MANAGEMENT_API_TOKEN_FILE).toBeUndefined();
    expect(env[OAUTH_ENV.clientId]?.secret).toEqual({ name: 'reconciler-oauth', key: 'client-id' });
    expect(env[OAUTH_ENV.clientSecret]?.secret).toEqual({ name: 'reconciler-oauth', key: 'client-secret' });
    expect(env[OAUTH_ENV.refreshToken]?.secret).toEqual({ name: 'reconciler-oauth', key: 'refresh-token' });
    expect(env[OAUTH_ENV.refreshTokenFile]?.value).toBe(`/var/lib/reconciler/${DEFAULT_REFRESH_TOKEN_FILE}`);
    expect(env.MANAGEMENT_API_URL?.value).toBe('https://api.example.com');
    // The state volume is the claim the chart creates.
    const pvc = findObject(full, 'PersistentVolumeClaim') as K8sObject & { spec: { resources: { requests: { storage: string } }; storageClassName: string } };
    expect(pod.volumes!.find((v) => v.name === 'state')?.persistentVolumeClaim?.claimName).toBe(pvc.metadata.name);
    expect(pvc.spec.resources.requests.storage).toBe('2Gi');
    expect(pvc.spec.storageClassName).toBe('standard');
    expect(pvc.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    // An existing claim is used as is.
    const existingClaim = renderObjects(helm, { valuesFiles: [FULL_VALUES], set: ['persistence.existingClaim=fleet-state'] });
    expect(existingClaim.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(findObject<Deployment>(existingClaim, 'Deployment').spec.template.spec.volumes!.find((v) => v.name === 'state')?.persistentVolumeClaim?.claimName).toBe('fleet-state');
    // Settings reach the command.
    expect(env.RECONCILE_RATE_LIMIT?.value).toBe('40/60s');
    expect(env.RECONCILE_LOG_LEVEL?.value).toBe('debug');
    expect(env.SMTP_PASSWORD?.secret).toEqual({ name: 'fleet-secrets', key: 'smtp-password' });
    expect(reconciler.envFrom).toEqual([{ secretRef: { name: 'fleet-function-secrets' } }]);
    expect(reconciler.args).toEqual(['/git/repo/manifests', '--watch', '--dry-run', '--output', 'json']);
    expect(mountOf(reconciler, 'idp-certificates')).toEqual({ name: 'idp-certificates', mountPath: '/etc/reconciler/idp', readOnly: true });
    expect(container(pod, 'reconciler').image).toBe('registry.example.com/platform/reconciler@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
  });

  it('full values: git-sync authenticates with an SSH key and checks host keys', () => {
    const pod = findObject<Deployment>(full, 'Deployment').spec.template.spec;
    const volume = pod.volumes!.find((v) => v.name === 'git-secret')!;
    expect(volume.secret).toEqual({
      secretName: 'fleet-manifests-deploy-key',
      defaultMode: 0o400,
      items: [
        { key: 'ssh-key', path: 'ssh' },
        { key: 'known_hosts', path: 'known_hosts' },
      ],
    });
    for (const name of ['git-sync', 'git-sync-init']) {
      const c = container(pod, name);
      expect(mountOf(c, 'git-secret')).toEqual({ name: 'git-secret', mountPath: '/etc/git-secret', readOnly: true });
      expect(c.args).toEqual(expect.arrayContaining(['--repo=git@git.example.com:platform/fleet-manifests.git', '--ref=production', '--ssh-key-file=/etc/git-secret/ssh', '--ssh-known-hosts=true', '--ssh-known-hosts-file=/etc/git-secret/known_hosts']));
    }
    expect(container(pod, 'git-sync').args).toContain('--period=15s');
    // The reconciler never sees the git credentials.
    expect(mountOf(container(pod, 'reconciler'), 'git-secret')).toBeUndefined();
    // fsGroup lets git-sync's group read the key.
    expect(pod.securityContext?.fsGroup).toBe(65533);
    expect(container(pod, 'git-sync').securityContext?.runAsGroup).toBe(65533);
  });

  it('gives the container arguments and an environment the command itself accepts', () => {
    for (const [label, objects] of [['defaults', defaults], ['full', full]] as const) {
      const reconciler = container(findObject<Deployment>(objects, 'Deployment').spec.template.spec, 'reconciler');
      // Secret references become placeholder values, as the kubelet would fill them.
      const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(envOf(reconciler)).map(([name, e]) => [name, e.value ?? `from-secret-${e.secret!.key}`]));
      const parsed = parseCommandLine(reconciler.args!, env);
      expect(parsed.command, label).toBe('reconcile');
      expect(parsed.values.watch, label).toBe(true);
      expect(parsed.values['state-dir'], label).toBe('/var/lib/reconciler');
      expect(parsed.values['metrics-addr'], label).toBe('0.0.0.0:9464');
      expect(parsed.values['api-url'], label).toBe('https://api.example.com');
      expect(() => tokenSourceFromEnvironment(parsed.values, env), label).not.toThrow();
    }
    const fullArgs = parseCommandLine(container(findObject<Deployment>(full, 'Deployment').spec.template.spec, 'reconciler').args!, {});
    expect(fullArgs.positionals).toEqual(['/git/repo/manifests']);
    expect(fullArgs.values['dry-run']).toBe(true);
    expect(fullArgs.values.output).toBe('json');
  });

  it('git-sync with an HTTPS token reads it from a file, never from an argument', () => {
    const objects = renderObjects(helm, { set: ['gitSync.auth.method=token', 'gitSync.auth.existingSecret=git-token', 'gitSync.auth.username=bot'] });
    const pod = findObject<Deployment>(objects, 'Deployment').spec.template.spec;
    expect(pod.volumes!.find((v) => v.name === 'git-secret')?.secret?.items).toEqual([{ key: 'token', path: 'token' }]);
    expect(container(pod, 'git-sync').args).toEqual(expect.arrayContaining(['--username=bot', '--password-file=/etc/git-secret/token']));
    expect(container(pod, 'git-sync').args!.some((a) => a.startsWith('--password='))).toBe(false);
  });

  it('full values: the ServiceMonitor scrapes the Service port the pod serves metrics on', () => {
    const monitor = findObject(full, 'ServiceMonitor') as K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; namespaceSelector: { matchNames: string[] }; endpoints: { port: string; path: string; interval: string }[] } };
    const service = findObject(full, 'Service') as K8sObject & { spec: { ports: { name: string }[] } };
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels)) expect(service.metadata.labels?.[key]).toBe(value);
    expect(monitor.spec.namespaceSelector.matchNames).toEqual(['fleet']);
    expect(monitor.spec.endpoints).toEqual([
      { port: 'metrics', path: '/metrics', interval: '15s', scrapeTimeout: '10s' },
      { port: 'gitsync-metrics', path: '/metrics', interval: '15s', scrapeTimeout: '10s' },
    ]);
    // The job is the release's full name, from a Service label (the same for every shard).
    expect((monitor.spec as { jobLabel?: string }).jobLabel).toBe('reconciler.job');
    expect(service.metadata.labels?.['reconciler.job']).toBe('reconciler');
    expect(service.spec.ports.map((p) => p.name)).toContain('metrics');
    expect(monitor.metadata.labels?.release).toBe('prometheus');
  });

  it('full values: the PrometheusRule carries the shipped rules, scoped to this release', () => {
    const rule = findObject(full, 'PrometheusRule') as K8sObject & { spec: { groups: { name: string; rules: { alert: string; expr: string; for: string; labels: Record<string, string> }[] }[] } };
    const shipped = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { name: string; rules: { alert: string; expr: string; for: string; labels: Record<string, string> }[] }[] };
    const rendered = rule.spec.groups.flatMap((g) => g.rules);
    const source = shipped.groups.flatMap((g) => g.rules);
    expect(rendered.map((r) => r.alert)).toEqual(source.map((r) => r.alert).filter((a) => a !== 'ReconcilerProjectUnhealthy'));
    // The configured thresholds (backupMaxAge 2d, pitrMaxLag 30m) replace the file's, in seconds.
    const thresholds: Record<string, [string, string]> = { ReconcilerProjectBackupStale: ['> 129600)', '> 172800)'], ReconcilerProjectPitrStale: ['> 3600)', '> 1800)'] };
    expect(rendered.filter((r) => thresholds[r.alert]).map((r) => r.alert).sort()).toEqual(Object.keys(thresholds).sort());
    for (const r of rendered) {
      const original = source.find((s) => s.alert === r.alert)!;
      const [from, to] = thresholds[r.alert] ?? ['', ''];
      expect(r.expr).toBe(original.expr.replaceAll('job="reconciler"', 'job="reconciler", namespace="fleet"').replace(from, to));
      expect(r.expr).toContain('namespace="fleet"');
      expect(r.labels).toEqual({ ...original.labels, team: 'platform' });
      expect(r.for).toBe(r.alert === 'ReconcilerDriftPersists' ? '45m' : original.for);
    }
    // Another release gets its own job name (the Service name, which the ServiceMonitor keeps).
    const other = renderObjects(helm, { release: 'eu', namespace: 'fleet-eu', set: ['prometheusRule.enabled=true'] });
    const otherRule = findObject(other, 'PrometheusRule') as typeof rule;
    expect(otherRule.spec.groups[0]!.rules[0]!.expr).toContain('job="eu-reconciler", namespace="fleet-eu"');
    expect(findObject(other, 'Service').metadata.name).toBe('eu-reconciler');
    expect(otherRule.spec.groups[0]!.rules.find((r) => r.alert === 'ReconcilerDriftPersists')!.for).toBe('30m');
    expect(rule.spec.groups.map((g) => g.name)).toEqual(['reconciler', 'reconciler-fleet']);
    // `prometheusRule.disabled` accepts exactly the shipped alerts' names.
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8'));
    expect([...schema.properties.prometheusRule.properties.disabled.items.enum].sort()).toEqual(source.map((r) => r.alert).sort());
    // Durations of several units add up; the defaults are the file's own numbers.
    const mixed = findObject(renderObjects(helm, { set: ['prometheusRule.enabled=true', 'prometheusRule.backupMaxAge=1d12h30m', 'prometheusRule.pitrMaxLag=1w'] }), 'PrometheusRule') as typeof rule;
    const mixedRules = mixed.spec.groups.flatMap((g) => g.rules);
    expect(mixedRules.find((r) => r.alert === 'ReconcilerProjectBackupStale')!.expr).toContain('> 131400)');
    expect(mixedRules.find((r) => r.alert === 'ReconcilerProjectPitrStale')!.expr).toContain('> 604800)');
    const otherFleet = otherRule.spec.groups.flatMap((g) => g.rules);
    expect(otherFleet.find((r) => r.alert === 'ReconcilerProjectBackupStale')!.expr).toContain('> 129600)');
    expect(otherFleet.find((r) => r.alert === 'ReconcilerProjectPitrStale')!.expr).toContain('> 3600)');
    // The fleet group can be left out as a whole; the reconciler's own alerts stay.
    const withoutFleet = findObject(renderObjects(helm, { set: ['prometheusRule.enabled=true', 'prometheusRule.fleetAlerts=false'] }), 'PrometheusRule') as typeof rule;
    expect(withoutFleet.spec.groups.map((g) => g.name)).toEqual(['reconciler']);
    expect(withoutFleet.spec.groups[0]!.rules.map((r) => r.alert)).toEqual(shipped.groups.find((g) => g.name === 'reconciler')!.rules.map((r) => r.alert));
  });

  it('full values: the dashboard ConfigMap carries the shipped dashboard, labelled for the Grafana sidecar', () => {
    const configMap = findObject(full, 'ConfigMap') as K8sObject & { data: Record<string, string> };
    expect(configMap.metadata.labels?.grafana_dashboard).toBe('1');
    expect(configMap.metadata.namespace).toBe('monitoring');
    expect(configMap.metadata.annotations).toEqual({ grafana_folder: 'Platform' });
    const shipped = readFileSync(DASHBOARD_FILE, 'utf8');
    expect(shipped).toContain('${DS_PROMETHEUS}');
    const dashboard = JSON.parse(configMap.data['reconciler.json']!);
    expect(dashboard).toEqual(JSON.parse(shipped.replaceAll('${DS_PROMETHEUS}', 'prom-main')));
    expect(configMap.data['reconciler.json']).not.toContain('${DS_PROMETHEUS}');
    const relabelled = renderObjects(helm, { set: ['grafanaDashboard.enabled=true', 'grafanaDashboard.labelKey=dashboards', 'grafanaDashboard.labelValue=platform'] });
    expect(findObject(relabelled, 'ConfigMap').metadata.labels?.dashboards).toBe('platform');
  });

  it('full values: the NetworkPolicy admits scrapes on the metrics port only and limits egress', () => {
    const policy = findObject(full, 'NetworkPolicy') as K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: { from?: unknown[]; ports: unknown[] }[]; egress: { to?: unknown[]; ports: { port: number | string; protocol: string }[] }[] } };
    const deployment = findObject<Deployment>(full, 'Deployment');
    for (const [key, value] of Object.entries(policy.spec.podSelector.matchLabels)) expect(deployment.spec.template.metadata.labels[key]).toBe(value);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress).toEqual([
      {
        ports: [
          { port: 'metrics', protocol: 'TCP' },
          { port: 'gitsync-metrics', protocol: 'TCP' },
        ],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      },
    ]);
    const egressPorts = policy.spec.egress.flatMap((rule) => rule.ports.map((p) => `${p.protocol}/${p.port}`)).sort();
    expect(egressPorts).toEqual(['TCP/22', 'TCP/443', 'TCP/53', 'UDP/53']);
    expect(policy.spec.egress[1]!.to).toEqual([{ ipBlock: { cidr: '203.0.113.0/24' } }]);
  });

  it('values.schema.json rejects bad values before anything renders', () => {
    const cases: [string[], RegExp][] = [
      [['replicaCount=2'], /replicaCount/],
      [['api.auth=basic'], /api\/auth/],
      [['reconcile.rateLimit=fast'], /rateLimit/],
      [['reconcile.logLevel=loud'], /logLevel/],
      [['gitSync.auth.method=password'], /gitSync\/auth\/method/],
      [['gitSync.period=soon'], /period/],
      [['metrics.port=70000'], /metrics\/port/],
      [['replicas=1'], /replicas/],
      [['prometheusRule.disabled[0]=NoSuchAlert'], /disabled/],
      [['prometheusRule.backupMaxAge=36 hours'], /backupMaxAge/],
      [['prometheusRule.pitrMaxLag=500ms'], /pitrMaxLag/],
      [['prometheusRule.fleetAlerts=maybe'], /fleetAlerts/],
      [['image.digest=latest'], /digest/],
      [['gitSync.period=-5'], /period/],
      [['reconcile.resync=sometimes'], /resync/],
      [['reconcile.logFormat=xml'], /logFormat/],
      [['reconcile.rateModel=global'], /rateModel/],
      [['reconcile.maxObservationAge=1 hour'], /maxObservationAge/],
      [['shards[0].name=EU West'], /shards\/0\/name/],
      [['shards[0].replicas=2'], /replicas/],
      [['prometheusRule.runbookBaseUrl=wiki'], /runbookBaseUrl/],
    ];
    for (const [set, message] of cases) {
      const result = template(helm, { set });
      expect(result.status, `--set ${set.join(',')} must fail`).not.toBe(0);
      expect(result.stderr).toMatch(/schema/);
      expect(result.stderr).toMatch(message);
    }
  });

  it('refuses incomplete credentials with a message that says what to set', () => {
    const oauth = template(helm, { set: ['api.auth=oauth'] });
    expect(oauth.status).not.toBe(0);
    expect(oauth.stderr).toContain('set api.oauth.existingSecret');
    const ssh = template(helm, { set: ['gitSync.auth.method=ssh'] });
    expect(ssh.status).not.toBe(0);
    expect(ssh.stderr).toContain('set gitSync.auth.existingSecret');
  });

  it('NOTES.txt says what to do when the token Secret is missing, and warns about OAuth without persistence', () => {
    const install = (set: string[]) => runHelm(helm, ['install', 'reconciler', CHART_DIR, '--dry-run=client', '--namespace', 'fleet', '--values', REQUIRED_VALUES, ...set.flatMap((s) => ['--set', s])]);
    const missing = install([]);
    expect(missing.status, missing.stderr).toBe(0);
    expect(missing.stdout).toContain('create secret generic reconciler-api-token --from-file=token=./token');
    const oauth = install(['api.auth=oauth', 'api.oauth.existingSecret=o', 'persistence.enabled=false']);
    expect(oauth.stdout).toContain('Set persistence.enabled=true');
    const fine = install(['api.token.existingSecret=t', 'api.auth=token', 'persistence.enabled=true']);
    expect(fine.stdout).not.toContain('ACTION NEEDED');
  });
});

describe('chart README', () => {
  const readmePath = join(CHART_DIR, 'README.md');

  it('documents every value of values.yaml, in a table generated from its comments', () => {
    const { rows, undocumented } = valuesRows(join(CHART_DIR, 'values.yaml'));
    expect(undocumented, 'values without a `# --` comment').toEqual([]);
    const table = valuesTable(rows);
    const readme = readFileSync(readmePath, 'utf8');
    const start = readme.indexOf(TABLE_BEGIN);
    const end = readme.indexOf(TABLE_END);
    expect(start).toBeGreaterThan(0);
    const current = readme.slice(start, end + TABLE_END.length);
    if (process.env.UPDATE_CHART_README === '1' && current !== table) {
      writeFileSync(readmePath, readme.slice(0, start) + table + readme.slice(end + TABLE_END.length));
      return;
    }
    expect(current, 'helm/reconciler/README.md is stale: run with UPDATE_CHART_README=1').toBe(table);
    // Every key the schema knows is in the table (or under a documented parent).
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    for (const key of Object.keys(schema.properties).filter((k) => k !== 'global')) {
      expect(rows.some((r) => r.key === key || r.key.startsWith(`${key}.`)), key).toBe(true);
    }
  });
});
