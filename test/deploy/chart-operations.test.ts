// The chart as operators run it: required values instead of placeholders, persistent state,
// git-sync's metrics and probes, IPv6 egress, one single-replica workload per shard, the
// on-demand reconcile token, the reconciler's newer settings, and runbook links.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { OAUTH_ENV } from '../../src/api/auth.js';
import { OPTIONS } from '../../src/cli/options.js';
import { INTERFACE_ENV, envFromInterface, interfaceDocument } from './metrics-catalogue.js';
import { REQUIRED_VALUES, findObject, renderObjects, runHelm, template, typecheckWithModels, validateWithModel, type K8sObject } from './render.js';
import { ALERTS_FILE, CHART_DIR, REPO_ROOT, helmTool, toolGate } from './tools.js';

const gate = toolGate(helmTool());

interface Deployment extends K8sObject {
  spec: { replicas: number; strategy: { type: string }; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: IPodSpec } };
}
interface Service extends K8sObject {
  spec: { selector: Record<string, string>; ports: { name: string; port: number }[] };
}
interface ServiceMonitor extends K8sObject {
  spec: { jobLabel?: string; targetLabels?: string[]; selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
}

function container(pod: IPodSpec, name: string): IContainer {
  const found = [...pod.containers, ...(pod.initContainers ?? [])].find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

function env(c: IContainer): Record<string, string | undefined> {
  return Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
}

function all<T = K8sObject>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as T[];
}

function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

const SHARDS = ['shards[0].name=eu', 'shards[0].api.token.existingSecret=eu-token', 'shards[1].name=us', 'shards[1].reconcile.rateLimit=20/60s', 'shards[2].name=apac', 'shards[2].persistence.size=5Gi'];

describe.skipIf(gate.skip)('the chart in operation', () => {
  let helm: string;

  beforeAll(() => {
    helm = gate.assertPresent();
  });

  it('ships no placeholder: without the image, API URL and repository it fails naming each, with them it renders', () => {
    const values = parseYaml(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as { image: { repository: string; tag: string; digest: string }; api: { url: string }; gitSync: { repo: string } };
    expect([values.image.repository, values.image.tag, values.image.digest, values.api.url, values.gitSync.repo]).toEqual(['', '', '', '', '']);
    const bare = template(helm, { bare: true });
    expect(bare.status).not.toBe(0);
    for (const name of ['image.repository', 'image.tag or image.digest', 'api.url', 'gitSync.repo']) expect(bare.stderr).toContain(name);
    // Each one alone is named, and only the missing one.
    const given = ['image.repository=registry.test/reconciler', 'image.tag=1.4.2', 'api.url=https://api.test', 'gitSync.repo=https://git.test/fleet.git'];
    for (const [index, name] of ['image.repository', 'image.tag or image.digest', 'api.url', 'gitSync.repo'].entries()) {
      const result = template(helm, { bare: true, set: given.filter((_, i) => i !== index) });
      expect(result.status, name).not.toBe(0);
      expect(result.stderr).toMatch(new RegExp(`required values are not set: ${name.replaceAll('.', '\\.')}`));
    }
    const rendered = renderObjects(helm, { bare: true, set: given });
    const pod = findObject<Deployment>(rendered, 'Deployment').spec.template.spec;
    expect(container(pod, 'reconciler').image).toBe('registry.test/reconciler:1.4.2');
    expect(env(container(pod, 'reconciler')).MANAGEMENT_API_URL).toBe('https://api.test');
    expect(container(pod, 'git-sync').args).toContain('--repo=https://git.test/fleet.git');
    // A digest stands in for the tag.
    const digest = `sha256:${'ab'.repeat(32)}`;
    const byDigest = renderObjects(helm, { bare: true, set: [...given.filter((g) => !g.startsWith('image.tag')), `image.digest=${digest}`] });
    expect(container(findObject<Deployment>(byDigest, 'Deployment').spec.template.spec, 'reconciler').image).toBe(`registry.test/reconciler@${digest}`);
    expect(JSON.stringify(rendered)).not.toMatch(/example\.com/);
  });

  it('keeps the state on a claim by default, so a rescheduled pod keeps its inventory and intents', () => {
    const objects = renderObjects(helm);
    const deployment = findObject<Deployment>(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    const claim = findObject(objects, 'PersistentVolumeClaim') as K8sObject & { spec: { accessModes: string[] } };
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(claim.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    const pod = deployment.spec.template.spec;
    expect(pod.volumes!.find((v) => v.name === 'state')?.persistentVolumeClaim?.claimName).toBe(claim.metadata.name);
    expect(container(pod, 'reconciler').volumeMounts!.find((m) => m.name === 'state')?.mountPath).toBe(env(container(pod, 'reconciler')).RECONCILE_STATE_DIR);
  });

  it('serves git-sync metrics, probes git-sync, and accepts its period as seconds or a duration', () => {
    const objects = renderObjects(helm, { set: ['serviceMonitor.enabled=true'] });
    const pod = findObject<Deployment>(objects, 'Deployment').spec.template.spec;
    const gitSync = container(pod, 'git-sync');
    expect(gitSync.args).toEqual(expect.arrayContaining(['--http-bind=:2112', '--http-metrics']));
    expect(gitSync.ports).toEqual([{ name: 'gitsync-metrics', containerPort: 2112, protocol: 'TCP' }]);
    expect(gitSync.startupProbe?.httpGet).toEqual({ path: '/', port: 'gitsync-metrics' });
    expect(gitSync.livenessProbe?.httpGet).toEqual({ path: '/', port: 'gitsync-metrics' });
    // The one-time init sync serves nothing.
    expect(container(pod, 'git-sync-init').args!.some((a) => a.startsWith('--http'))).toBe(false);
    const monitor = findObject<ServiceMonitor>(objects, 'ServiceMonitor');
    expect(monitor.spec.endpoints.map((e) => e.port)).toEqual(['metrics', 'gitsync-metrics']);
    expect(findObject<Service>(objects, 'Service').spec.ports.map((p) => p.name)).toEqual(['metrics', 'gitsync-metrics']);

    const period = (set: string[]) => container(findObject<Deployment>(renderObjects(helm, { set }), 'Deployment').spec.template.spec, 'git-sync').args!.find((a) => a.startsWith('--period='));
    expect(period(['gitSync.period=30'])).toBe('--period=30s');
    expect(period(['gitSync.period=1m30s'])).toBe('--period=1m30s');
    expect(period(['gitSync.period=45s'])).toBe('--period=45s');
    const off = renderObjects(helm, { set: ['gitSync.metrics.enabled=false'] });
    const offSync = container(findObject<Deployment>(off, 'Deployment').spec.template.spec, 'git-sync');
    expect(offSync.args!.some((a) => a.startsWith('--http'))).toBe(false);
    expect(offSync.livenessProbe).toBeUndefined();
    expect(findObject<Service>(off, 'Service').spec.ports.map((p) => p.name)).toEqual(['metrics']);
  });

  it('allows egress to IPv6 as well as IPv4 by default', () => {
    const policy = findObject(renderObjects(helm, { set: ['networkPolicy.enabled=true'] }), 'NetworkPolicy') as K8sObject & { spec: { egress: { to?: { ipBlock?: { cidr: string } }[]; ports: { port: number | string }[] }[] } };
    const apiRule = policy.spec.egress.find((rule) => rule.to)!;
    expect(apiRule.to!.map((peer) => peer.ipBlock?.cidr)).toEqual(['0.0.0.0/0', '::/0']);
    expect(apiRule.ports.map((p) => p.port)).toEqual([443, 22]);
  });

  describe('shards', () => {
    let objects: K8sObject[];

    beforeAll(() => {
      objects = renderObjects(helm, { set: [...SHARDS, 'serviceMonitor.enabled=true', 'prometheusRule.enabled=true', 'networkPolicy.enabled=true', 'shardMap=shards.yaml'] });
    });

    it('renders one single-replica workload per shard, each with its own token Secret, claim, Service and ServiceMonitor', () => {
      const deployments = all<Deployment>(objects, 'Deployment');
      expect(deployments.map((d) => d.metadata.name)).toEqual(['reconciler-eu', 'reconciler-us', 'reconciler-apac']);
      const claims = all<K8sObject & { spec: { resources: { requests: { storage: string } } } }>(objects, 'PersistentVolumeClaim');
      const services = all<Service>(objects, 'Service');
      const monitors = all<ServiceMonitor>(objects, 'ServiceMonitor');
      const tokenSecrets = new Set<string>();
      for (const deployment of deployments) {
        const shard = deployment.metadata.name.replace('reconciler-', '');
        expect(deployment.spec.replicas, shard).toBe(1);
        expect(deployment.spec.strategy.type, shard).toBe('Recreate');
        expect(deployment.metadata.labels?.shard).toBe(shard);
        expect(deployment.spec.selector.matchLabels.shard).toBe(shard);
        const pod = deployment.spec.template.spec;
        const reconciler = container(pod, 'reconciler');
        expect(env(reconciler).RECONCILE_SHARD).toBe(shard);
        expect(env(reconciler).RECONCILE_SHARDS).toBe('/git/repo/shards.yaml');
        // Its own token and its own state.
        const secretName = pod.volumes!.find((v) => v.name === 'api-token')!.secret!.secretName!;
        tokenSecrets.add(secretName);
        const claimName = pod.volumes!.find((v) => v.name === 'state')!.persistentVolumeClaim!.claimName;
        expect(claims.map((c) => c.metadata.name)).toContain(claimName);
        expect(claims.find((c) => c.metadata.name === claimName)!.metadata.labels?.shard).toBe(shard);
        // Its own Service selects its pods only; its ServiceMonitor its Service only.
        const service = services.find((s) => s.metadata.labels?.shard === shard)!;
        expect(service.metadata.name).toBe(`reconciler-${shard}`);
        expect(service.metadata.labels?.['reconciler.job']).toBe('reconciler');
        for (const other of deployments) expect(matches(service.spec.selector, other.spec.template.metadata.labels), `${service.metadata.name} selects ${other.metadata.name}`).toBe(other === deployment);
        const monitor = monitors.find((m) => m.metadata.labels?.shard === shard)!;
        for (const other of services) expect(matches(monitor.spec.selector.matchLabels, other.metadata.labels), `${monitor.metadata.name} selects ${other.metadata.name}`).toBe(other === service);
        // Series carry the shard's name; the job stays the release's, which the rules select on.
        expect(monitor.spec.targetLabels).toEqual(['shard']);
        expect(monitor.spec.jobLabel).toBe('reconciler.job');
      }
      expect([...tokenSecrets]).toEqual(['eu-token', 'reconciler-us-api-token', 'reconciler-apac-api-token']);
      expect(claims.map((c) => [c.metadata.name, c.spec.resources.requests.storage])).toEqual([
        ['reconciler-eu-state', '1Gi'],
        ['reconciler-us-state', '1Gi'],
        ['reconciler-apac-state', '5Gi'],
      ]);
      // A shard's own settings reach its workload only.
      const rate = deployments.map((d) => env(container(d.spec.template.spec, 'reconciler')).RECONCILE_RATE_LIMIT);
      expect(rate).toEqual(['45/60s', '20/60s', '45/60s']);
      // One PrometheusRule and one NetworkPolicy cover every shard.
      expect(all(objects, 'PrometheusRule')).toHaveLength(1);
      const policy = findObject(objects, 'NetworkPolicy') as K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> } } };
      for (const deployment of deployments) expect(matches(policy.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
    });

    it('validates every shard object against the Kubernetes and prometheus-operator models and types', async () => {
      for (const object of objects) await expect(validateWithModel(object), `${object.kind}/${object.metadata.name}`).resolves.toBeUndefined();
      const result = typecheckWithModels(objects);
      expect(result.output).toBe('');
      expect(result.status).toBe(0);
    }, 120_000);

    it('never hands the chart-wide token to a shard, and creates a shard Secret only from the shard\'s own value', () => {
      const shared = renderObjects(helm, { set: ['api.token.existingSecret=fleet-token', 'shards[0].name=eu', 'shards[1].name=us', 'shards[1].api.token.value=pat-canary-us'] });
      const secretOf = (name: string) => findObject<Deployment>(shared, 'Deployment', name).spec.template.spec.volumes!.find((v) => v.name === 'api-token')!.secret!.secretName;
      expect(secretOf('reconciler-eu')).toBe('reconciler-eu-api-token');
      expect(secretOf('reconciler-us')).toBe('reconciler-us-api-token');
      const secrets = all<K8sObject & { data: Record<string, string> }>(shared, 'Secret').filter((s) => s.metadata.name.endsWith('-api-token'));
      expect(secrets.map((s) => s.metadata.name)).toEqual(['reconciler-us-api-token']);
      expect(Buffer.from(secrets[0]!.data.token!, 'base64').toString()).toBe('pat-canary-us');
      expect(JSON.stringify(all(shared, 'Deployment'))).not.toContain('pat-canary-us');
    });

    it('refuses a shard name used twice, and OAuth shards without their own Secret', () => {
      const twice = template(helm, { set: ['shards[0].name=eu', 'shards[1].name=eu'] });
      expect(twice.status).not.toBe(0);
      expect(twice.stderr).toContain('shards[1].name: "eu" is used twice');
      const oauth = template(helm, { set: ['api.auth=oauth', 'api.oauth.existingSecret=fleet-oauth', 'shards[0].name=eu'] });
      expect(oauth.status).not.toBe(0);
      expect(oauth.stderr).toContain('set shards[0].api.oauth.existingSecret');
      const fine = renderObjects(helm, { set: ['api.auth=oauth', 'shards[0].name=eu', 'shards[0].api.oauth.existingSecret=eu-oauth'] });
      const reconciler = container(findObject<Deployment>(fine, 'Deployment').spec.template.spec, 'reconciler');
      expect(reconciler.env!.find((e) => e.name === OAUTH_ENV.clientId)?.valueFrom?.secretKeyRef?.name).toBe('eu-oauth');
    });

    it('NOTES.txt names each shard\'s missing token Secret', () => {
      const install = runHelm(helm, ['install', 'reconciler', CHART_DIR, '--dry-run=client', '--namespace', 'fleet', '--values', REQUIRED_VALUES, '--set', 'shards[0].name=eu', '--set', 'shards[1].name=us', '--set', 'shards[1].api.token.existingSecret=us-token']);
      expect(install.status, install.stderr).toBe(0);
      expect(install.stdout).toContain('pod of shard eu waits until its API token Secret exists');
      expect(install.stdout).toContain('create secret generic reconciler-eu-api-token --from-file=token=./token');
      expect(install.stdout).not.toContain('reconciler-us-api-token');
      expect(install.stdout).toContain('logs deploy/reconciler-eu -c reconciler');
    });
  });

  it('mounts the POST /reconcile token from a Secret and passes its path', () => {
    const refused = template(helm, { set: ['trigger.enabled=true'] });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('set trigger.existingSecret');
    const objects = renderObjects(helm, { set: ['trigger.enabled=true', 'trigger.existingSecret=reconcile-trigger'] });
    const pod = findObject<Deployment>(objects, 'Deployment').spec.template.spec;
    const reconciler = container(pod, 'reconciler');
    const mount = reconciler.volumeMounts!.find((m) => m.name === 'trigger-token')!;
    expect(mount.readOnly).toBe(true);
    expect(env(reconciler).RECONCILE_TRIGGER_TOKEN_FILE).toBe(`${mount.mountPath}/token`);
    expect(pod.volumes!.find((v) => v.name === 'trigger-token')?.secret).toEqual({ secretName: 'reconcile-trigger', defaultMode: 0o440, items: [{ key: 'token', path: 'token' }] });
    expect(findObject<Deployment>(renderObjects(helm), 'Deployment').spec.template.spec.volumes!.some((v) => v.name === 'trigger-token')).toBe(false);
  });

  it('mounts the status view\'s token from a Secret and passes its path and the runbook URL', () => {
    const objects = renderObjects(helm, { set: ['statusView.existingSecret=reconcile-status', 'statusView.runbookUrl=https://git.example.com/ops/runbook.md'] });
    const pod = findObject<Deployment>(objects, 'Deployment').spec.template.spec;
    const reconciler = container(pod, 'reconciler');
    const mount = reconciler.volumeMounts!.find((m) => m.name === 'status-token')!;
    expect(mount.readOnly).toBe(true);
    expect(env(reconciler).RECONCILE_STATUS_TOKEN_FILE).toBe(`${mount.mountPath}/token`);
    expect(env(reconciler).RECONCILE_RUNBOOK_URL).toBe('https://git.example.com/ops/runbook.md');
    expect(pod.volumes!.find((v) => v.name === 'status-token')?.secret).toEqual({ secretName: 'reconcile-status', defaultMode: 0o440, items: [{ key: 'token', path: 'token' }] });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    // By default the chart generates the token (a Secret of its own); the page names the runbook's sections.
    const defaults = renderObjects(helm);
    const generated = defaults.find((o) => o.kind === 'Secret' && o.metadata.name.endsWith('-status-token')) as (K8sObject & { data: Record<string, string> }) | undefined;
    expect(generated).toBeDefined();
    expect(Buffer.from(generated!.data.token!, 'base64').toString('utf8')).toMatch(/^[A-Za-z0-9]{40}$/);
    const plainPod = findObject<Deployment>(defaults, 'Deployment').spec.template.spec;
    const plain = container(plainPod, 'reconciler');
    expect(env(plain).RECONCILE_STATUS_TOKEN_FILE).toBe('/var/run/secrets/reconciler/status/token');
    expect(plainPod.volumes!.find((v) => v.name === 'status-token')?.secret?.secretName).toBe(generated!.metadata.name);
    expect(env(plain).RECONCILE_RUNBOOK_URL).toBeUndefined();
    // generateToken: false: no token, and the daemon answers on loopback only (docs/kubernetes.md).
    const none = renderObjects(helm, { set: ['statusView.generateToken=false'] });
    expect(none.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(env(container(findObject<Deployment>(none, 'Deployment').spec.template.spec, 'reconciler')).RECONCILE_STATUS_TOKEN_FILE).toBeUndefined();
    expect(template(helm, { set: ['statusView.runbookUrl=javascript:alert(1)'] }).status).not.toBe(0);
  });

  it('passes the newer settings through the interface\'s environment variables', () => {
    const objects = renderObjects(helm, { set: ['reconcile.resync=continuous', 'reconcile.rateModel=scoped', 'reconcile.maxObservationAge=30m', 'reconcile.logFormat=pretty', 'reconcile.notifications=/git/repo/notifications.yaml'] });
    const values = env(container(findObject<Deployment>(objects, 'Deployment').spec.template.spec, 'reconciler'));
    expect(values).toMatchObject({ RECONCILE_RESYNC: 'continuous', RECONCILE_RATE_MODEL: 'scoped', RECONCILE_MAX_OBSERVATION_AGE: '30m', RECONCILE_LOG_FORMAT: 'pretty', RECONCILE_NOTIFICATIONS: '/git/repo/notifications.yaml' });
    // Empty values leave the reconciler's own defaults.
    const defaults = env(container(findObject<Deployment>(renderObjects(helm, { set: ['reconcile.logFormat=', 'reconcile.maxObservationAge='] }), 'Deployment').spec.template.spec, 'reconciler'));
    for (const name of ['RECONCILE_RATE_MODEL', 'RECONCILE_MAX_OBSERVATION_AGE', 'RECONCILE_LOG_FORMAT', 'RECONCILE_NOTIFICATIONS', 'RECONCILE_SHARD', 'RECONCILE_SHARDS']) expect(defaults[name], name).toBeUndefined();
    // Each is a name of the interface (or one the command reads already).
    const known = new Set([...Object.values(OPTIONS).map((o) => o.env).filter(Boolean), ...INTERFACE_ENV]);
    for (const name of Object.keys(values).filter((n) => n.startsWith('RECONCILE_'))) expect(known.has(name), name).toBe(true);
  });

  it('the interface documents every environment name the chart relies on', (context) => {
    const document = interfaceDocument();
    if (!document) {
      context.skip();
      return;
    }
    const names = envFromInterface(document);
    for (const name of INTERFACE_ENV) expect(names.has(name), name).toBe(true);
  });

  it('templates the observation-age and git-sync thresholds and the runbook links into the PrometheusRule', () => {
    const rule = findObject(renderObjects(helm, { set: ['prometheusRule.enabled=true', 'reconcile.maxObservationAge=30m', 'prometheusRule.gitSyncStaleAfter=1h', 'prometheusRule.runbookBaseUrl=https://git.test/platform/fleet-reconciler/-/blob/main/'] }), 'PrometheusRule') as K8sObject & {
      spec: { groups: { rules: { alert: string; expr: string; annotations: Record<string, string> }[] }[] };
    };
    const rules = rule.spec.groups.flatMap((g) => g.rules);
    const byName = (name: string) => rules.find((r) => r.alert === name)!;
    expect(byName('ReconcilerObservationStale').expr).toMatch(/\) > 1800$/);
    expect(byName('ReconcilerObservationBoundTooHigh').expr).toMatch(/\) > 1800$/);
    expect(byName('ReconcilerGitSyncStale').expr).toContain('[1h]');
    expect(byName('ReconcilerGitSyncStale').expr).not.toContain('[15m]');
    for (const r of rules) expect(r.annotations.runbook_url, r.alert).toBe(`https://git.test/platform/fleet-reconciler/-/blob/main/docs/runbook.md#${r.alert.toLowerCase()}`);
  });
});

describe('runbook', () => {
  it('has a section for every alert, at the anchor its runbook_url names', () => {
    const rules = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: { alert: string; annotations: Record<string, string> }[] }[] };
    const runbook = readFileSync(join(REPO_ROOT, 'docs', 'runbook.md'), 'utf8');
    // GitHub's anchor of a heading: lower case, spaces to hyphens, punctuation dropped.
    const anchors = new Set([...runbook.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      expect(rule.annotations.runbook_url, rule.alert).toBe(`docs/runbook.md#${rule.alert.toLowerCase()}`);
      expect(anchors.has(rule.alert.toLowerCase()), `docs/runbook.md has a section ${rule.alert}`).toBe(true);
    }
  });
});
