/**
 * deploy/kubernetes/: every manifest valid against the Kubernetes API's JSON schemas (the
 * validators of the `kubernetes-models` package), the Kustomization rendered by kustomize
 * itself (`kubectl kustomize`, which refuses unknown fields) and its output valid too, and the
 * pieces agreeing with each other, with the image and with the server's configuration: the
 * port the Dockerfile exposes, probe paths the server has, one set of labels, secrets from
 * Secrets, a TRUST_PROXY the server accepts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const FOLDER = join(REPO_ROOT, 'deploy', 'kubernetes');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: unknown;
  data?: Record<string, string>;
}

const MODELS: Record<string, { validate(this: void, data: unknown): void }> = {
  'v1/ConfigMap': { validate: (data) => new ConfigMap(data as ConstructorParameters<typeof ConfigMap>[0]).validate() },
  'v1/Service': { validate: (data) => new Service(data as ConstructorParameters<typeof Service>[0]).validate() },
  'apps/v1/Deployment': { validate: (data) => new Deployment(data as ConstructorParameters<typeof Deployment>[0]).validate() },
  'policy/v1/PodDisruptionBudget': {
    validate: (data) => new PodDisruptionBudget(data as ConstructorParameters<typeof PodDisruptionBudget>[0]).validate(),
  },
};

function manifests(): Manifest[] {
  const found: Manifest[] = [];
  for (const file of readdirSync(FOLDER).filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')) {
    for (const document of parseAllDocuments(readFileSync(join(FOLDER, file), 'utf8'))) {
      assert.deepEqual(document.errors, [], file);
      found.push(document.toJS() as Manifest);
    }
  }
  return found;
}

function only<T extends Manifest>(kind: string): T {
  const matching = manifests().filter((manifest) => manifest.kind === kind);
  assert.equal(matching.length, 1, kind);
  return matching[0] as T;
}

test('every manifest is valid against the Kubernetes schema of its kind', () => {
  const all = manifests();
  assert.deepEqual(all.map((manifest) => manifest.kind).sort(), ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service']);
  for (const manifest of all) {
    const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
    assert.ok(model, `no schema for ${manifest.apiVersion} ${manifest.kind}`);
    model.validate(manifest);
  }
});

test('the schema check catches a broken manifest', () => {
  const deployment = structuredClone(only<Manifest>('Deployment')) as unknown as { spec: { replicas: unknown } };
  deployment.spec.replicas = 'two';
  assert.throws(() => MODELS['apps/v1/Deployment']!.validate(deployment));
});

test('the kustomization lists every manifest', () => {
  const kustomization = parseAllDocuments(readFileSync(join(FOLDER, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as { resources: string[] };
  const files = readdirSync(FOLDER).filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml').sort();
  assert.deepEqual([...kustomization.resources].sort(), files);
});

/** `kubectl kustomize FOLDER`, or undefined where kubectl is not installed. */
function kustomize(folder: string): { status: number | null; stdout: string; stderr: string } | undefined {
  const result = spawnSync('kubectl', ['kustomize', folder], { encoding: 'utf8', timeout: 60_000 });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return undefined;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The fields of kustomize's Kustomization (v1beta1) this folder may use; a typo is not one of them. */
const KUSTOMIZATION_FIELDS = new Set([
  'apiVersion', 'kind', 'metadata', 'resources', 'components', 'namespace', 'namePrefix', 'nameSuffix', 'labels',
  'commonLabels', 'commonAnnotations', 'images', 'replicas', 'patches', 'configMapGenerator', 'secretGenerator',
  'generatorOptions', 'buildMetadata', 'openapi', 'crds', 'replacements', 'sortOptions',
]);

test('the Kustomization is valid: known fields, existing files, and kustomize renders it into valid manifests', (t) => {
  const kustomization = parseAllDocuments(readFileSync(join(FOLDER, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as Record<string, unknown>;
  assert.equal(kustomization.apiVersion, 'kustomize.config.k8s.io/v1beta1');
  assert.equal(kustomization.kind, 'Kustomization');
  for (const key of Object.keys(kustomization)) assert.ok(KUSTOMIZATION_FIELDS.has(key), `unknown Kustomization field ${key}`);
  const resources = kustomization.resources as unknown[];
  assert.ok(Array.isArray(resources) && resources.every((r) => typeof r === 'string'));

  const rendered = kustomize(FOLDER);
  if (rendered === undefined) {
    t.skip('kubectl is not installed: the Kustomization was checked field by field only');
    return;
  }
  assert.equal(rendered.status, 0, rendered.stderr);
  const documents = parseAllDocuments(rendered.stdout).map((document) => {
    assert.deepEqual(document.errors, []);
    return document.toJS() as Manifest;
  });
  assert.deepEqual(documents.map((d) => d.kind).sort(), manifests().map((m) => m.kind).sort());
  for (const manifest of documents) MODELS[`${manifest.apiVersion}/${manifest.kind}`]!.validate(manifest);

  // And kustomize does refuse a broken one, so the check above means something.
  const broken = mkdtempSync(join(tmpdir(), 'shortlink-kustomize-'));
  try {
    cpSync(FOLDER, broken, { recursive: true });
    writeFileSync(join(broken, 'kustomization.yaml'), readFileSync(join(FOLDER, 'kustomization.yaml'), 'utf8').replace('resources:', 'resourcez:'));
    const refused = kustomize(broken)!;
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /unknown field \\?"resourcez\\?"/);
  } finally {
    rmSync(broken, { recursive: true, force: true });
  }
});

test('the pod mounts no service-account token, spreads its replicas and bounds its emptyDir', () => {
  const pod = (only<Manifest>('Deployment') as unknown as { spec: { template: { spec: {
    automountServiceAccountToken: boolean;
    topologySpreadConstraints: { topologyKey: string; labelSelector: { matchLabels: Record<string, string> } }[];
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: { podAffinityTerm: { topologyKey: string } }[] } };
    volumes: { name: string; emptyDir?: { sizeLimit?: string } }[];
  } } } }).spec.template.spec;
  assert.equal(pod.automountServiceAccountToken, false);
  assert.deepEqual(pod.topologySpreadConstraints.map((c) => c.topologyKey), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
  for (const constraint of pod.topologySpreadConstraints) assert.deepEqual(constraint.labelSelector.matchLabels, { 'app.kubernetes.io/name': 'shortlink' });
  assert.equal(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]!.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
  for (const volume of pod.volumes.filter((v) => v.emptyDir !== undefined)) assert.match(volume.emptyDir!.sizeLimit ?? '', /^\d+Mi$/, volume.name);
});

test('the tokens and the webhook key come from a Secret, and the ConfigMap trusts only named proxies', () => {
  const container = (only<Manifest>('Deployment') as unknown as { spec: { template: { spec: { containers: {
    env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
  }[] } } } }).spec.template.spec.containers[0]!;
  const fromSecret = (name: string) => container.env.find((variable) => variable.name === name)?.valueFrom?.secretKeyRef;
  assert.deepEqual(fromSecret('WEBHOOK_SECRET_KEY'), { name: 'shortlink-secrets', key: 'webhook-secret-key' });
  assert.deepEqual(fromSecret('METRICS_TOKEN'), { name: 'shortlink-secrets', key: 'metrics-token' });
  assert.deepEqual(fromSecret('ADMIN_TOKEN'), { name: 'shortlink-secrets', key: 'admin-token', optional: true });
  const readme = readFileSync(join(FOLDER, 'README.md'), 'utf8');
  for (const key of ['webhook-secret-key', 'metrics-token', 'admin-token']) {
    assert.match(readme, new RegExp(`kubectl create secret generic shortlink-secrets[^\`]*--from-literal=${key}=`));
  }

  const data = only<Manifest>('ConfigMap').data!;
  for (const secret of ['DATABASE_URL', 'WEBHOOK_SECRET_KEY', 'METRICS_TOKEN', 'ADMIN_TOKEN']) assert.equal(data[secret], undefined, secret);
  assert.doesNotMatch(data.TRUST_PROXY ?? '', /^(true|on)$/i, 'TRUST_PROXY=true trusts every pod of the cluster');
  // The server starts with these settings, and trusts exactly the range named.
  const config = loadConfig({
    ...data, DATABASE_URL: 'postgres://shortlink:secret@postgres:5432/shortlink',
    WEBHOOK_SECRET_KEY: 'k'.repeat(64), METRICS_TOKEN: 'm'.repeat(64), ADMIN_TOKEN: 'a'.repeat(64),
  });
  assert.deepEqual(config.trustProxy, data.TRUST_PROXY!.split(',').map((entry) => entry.trim()));
  assert.match(readme, /## Which proxies to trust/);
});

test('the Deployment, Service and PodDisruptionBudget agree with each other and with the image', () => {
  type Probe = { httpGet: { path: string; port: string } };
  const deployment = only<Manifest & {
    spec: {
      selector: { matchLabels: Record<string, string> };
      template: {
        metadata: { labels: Record<string, string> };
        spec: {
          containers: {
            ports: { name: string; containerPort: number }[];
            livenessProbe: Probe;
            readinessProbe: Probe;
            lifecycle: { preStop: unknown };
            env: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
            envFrom: { configMapRef: { name: string } }[];
            securityContext: { readOnlyRootFilesystem: boolean };
          }[];
        };
      };
    };
  }>('Deployment');
  const service = only<Manifest & { spec: { selector: Record<string, string>; ports: { targetPort: string }[] } }>('Service');
  const budget = only<Manifest & { spec: { selector: { matchLabels: Record<string, string> } } }>('PodDisruptionBudget');
  const configMap = only<Manifest>('ConfigMap');

  const labels = deployment.spec.template.metadata.labels;
  assert.deepEqual(deployment.spec.selector.matchLabels, labels);
  assert.deepEqual(service.spec.selector, labels);
  assert.deepEqual(budget.spec.selector.matchLabels, labels);

  const container = deployment.spec.template.spec.containers[0]!;
  const exposed = /^EXPOSE (\d+)$/m.exec(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'))?.[1];
  assert.equal(container.ports[0]!.containerPort, Number(exposed));
  assert.equal(service.spec.ports[0]!.targetPort, container.ports[0]!.name);
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.ok(container.lifecycle.preStop, 'a preStop pause');
  const database = container.env.find((variable) => variable.name === 'DATABASE_URL');
  assert.deepEqual(database?.valueFrom?.secretKeyRef, { name: 'shortlink-database', key: 'url' });
  assert.ok(readFileSync(join(FOLDER, 'README.md'), 'utf8').includes('kubectl create secret generic shortlink-database'));
  assert.equal(container.envFrom[0]!.configMapRef.name, configMap.metadata.name);
  assert.match(configMap.data!.BASE_URL!, /^https?:\/\//);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
});
