/**
 * deploy/kubernetes/: every manifest valid against the Kubernetes API's JSON schemas (the
 * validators of the `kubernetes-models` package), and the pieces agreeing with each other and
 * with the image: the port the Dockerfile exposes, probe paths the server has, one set of labels.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
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
