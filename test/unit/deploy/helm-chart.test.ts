/**
 * The Helm chart (deploy/helm/durable-react): `helm lint`, `helm template` with the three value
 * sets in its ci/ folder (minimal, production, all-roles) and `kubeconform -strict` against the
 * committed schemas (Kubernetes kinds and KEDA's CRDs), then the rendered objects themselves:
 * every role present on its queue, probes, no privileged or unconfined pod but the exec sandbox's
 * (and only as the values say), secrets only by reference, the grace period above the drain time,
 * autoscaling per role, the migrations hook — and clear errors for bad values.
 */
import { describe, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { goBinary, requiring } from '../../support/requirements';

const test = requiring(nodeTest, { group: 'Helm chart tests', requirement: 'helm' });
const root = join(__dirname, '..', '..', '..');
const chart = join(root, 'deploy', 'helm', 'durable-react');
const SCHEMAS = join(
  root,
  'deploy',
  'helm',
  'schemas',
  '{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json',
);
const KUBE = '1.34.0';
const ROLES = ['workflows', 'models', 'tools', 'exec'];

type Obj = {
  kind: string;
  apiVersion: string;
  metadata: { name: string; annotations?: Record<string, string> };
  // Rendered Kubernetes objects, read field by field as the assertions need.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec: any;
};
type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };

const valuesFile = (set: string) => join(chart, 'ci', `${set}-values.yaml`);

/** helm, with the Kubernetes version the chart requires for `template` and `lint`. */
function helm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(goBinary('helm') ?? 'helm', [...args, '--kube-version', KUBE], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function render(set: string, extra: string[] = []): { yaml: string; objects: Obj[] } {
  const r = helm(['template', 'dr', chart, '-f', valuesFile(set), ...extra]);
  assert.equal(r.status, 0, r.stderr);
  const objects = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
  return { yaml: r.stdout, objects };
}

const deployments = (objs: Obj[]) => objs.filter((o) => o.kind === 'Deployment');
const workers = (objs: Obj[]) => deployments(objs).filter((o) => o.metadata.name.includes('-worker-'));
const container = (o: Obj) =>
  o.kind === 'Job' ? o.spec.template.spec.containers[0] : o.spec.template.spec.containers[0];
const env = (o: Obj) => container(o).env as Env[];
const envValue = (o: Obj, name: string) => env(o).find((e) => e.name === name)?.value;

describe('the Helm chart', () => {
  for (const set of ['minimal', 'production', 'all-roles']) {
    test(`${set}: helm lint, and kubeconform -strict accepts every rendered object`, () => {
      const lint = helm(['lint', chart, '-f', valuesFile(set)]);
      assert.equal(lint.status, 0, lint.stdout + lint.stderr);
      const { yaml, objects } = render(set);
      const out = execFileSync(
        goBinary('kubeconform') ?? 'kubeconform',
        ['-strict', '-summary', '-schema-location', SCHEMAS, '-'],
        { input: yaml, encoding: 'utf8' },
      );
      assert.match(
        out,
        new RegExp(`${objects.length} resources found.*Valid: ${objects.length}, Invalid: 0, Errors: 0, Skipped: 0`),
      );
    });
  }

  test('kubeconform -strict refuses what the schemas do not allow (the check can fail)', () => {
    const { yaml } = render('production');
    const broken = yaml.replace('procMount: Unmasked', 'procMount: Unmasked\n            procMnt: Unmasked');
    const r = spawnSync(goBinary('kubeconform') ?? 'kubeconform', ['-strict', '-schema-location', SCHEMAS, '-'], {
      input: broken,
      encoding: 'utf8',
    });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /additional properties 'procMnt' not allowed/);
    const scaled = yaml.replace('scaleTargetRef:', 'scaleTarget:');
    const k = spawnSync(goBinary('kubeconform') ?? 'kubeconform', ['-strict', '-schema-location', SCHEMAS, '-'], {
      input: scaled,
      encoding: 'utf8',
    });
    assert.equal(k.status, 1, 'the KEDA schema is checked too');
    assert.match(k.stdout, /ScaledObject/);
  });

  test('one Deployment per role, each on its own queue, with liveness, readiness and startup probes', () => {
    const { objects } = render('minimal');
    const ws = workers(objects);
    assert.deepEqual(ws.map((w) => envValue(w, 'DREACT_WORKER_ROLES')).sort(), [...ROLES].sort());
    for (const w of ws) {
      for (const role of ROLES) assert.equal(envValue(w, `DREACT_TASK_QUEUE_${role.toUpperCase()}`), `dreact-${role}`);
      const c = container(w);
      assert.deepEqual(c.command, ['node', 'dist/worker.cjs']);
      assert.equal(c.livenessProbe.httpGet.path, '/healthz');
      assert.equal(c.readinessProbe.httpGet.path, '/readyz', 'readiness = the worker polls');
      assert.equal(c.startupProbe.httpGet.path, '/healthz');
      assert.equal(envValue(w, 'DREACT_HEALTH_ADDR'), '0.0.0.0:8081');
      assert.equal(envValue(w, 'DREACT_METRICS_ADDR'), '0.0.0.0:9464');
    }
    const gw = deployments(objects).find((d) => d.metadata.name.endsWith('-gateway'))!;
    assert.deepEqual(container(gw).command, ['node', 'dist/gateway.cjs']);
    assert.equal(container(gw).readinessProbe.httpGet.path, '/readyz');
    assert.ok(objects.some((o) => o.kind === 'Service' && o.metadata.name.endsWith('-gateway')));
    const pdbs = objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name);
    assert.equal(pdbs.length, 5, `a PDB per worker Deployment and the gateway: ${pdbs.join(', ')}`);
  });

  test('rollouts: one pod surged, none taken away first; a change of agent files rolls the workers', () => {
    const { objects } = render('production');
    for (const w of workers(objects)) {
      assert.deepEqual(w.spec.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
      assert.match(w.spec.template.metadata.annotations['checksum/agents'], /^[0-9a-f]{64}$/);
    }
    const other = render('production', ['--set-string', 'agents.files.extra\\.yaml=name: extra']).objects;
    assert.notEqual(
      workers(other)[0]!.spec.template.metadata.annotations['checksum/agents'],
      workers(objects)[0]!.spec.template.metadata.annotations['checksum/agents'],
    );
  });

  test('all-roles: one worker Deployment running every role', () => {
    const ws = workers(render('all-roles').objects);
    assert.equal(ws.length, 1);
    assert.equal(envValue(ws[0]!, 'DREACT_WORKER_ROLES'), 'workflows,models,tools,exec');
  });

  test('no privileged or unconfined pod except the exec sandbox, and only as the values say', () => {
    const check = (objects: Obj[], allowed: (o: Obj) => boolean, label: string) => {
      for (const o of objects.filter((x) => x.kind === 'Deployment' || x.kind === 'Job')) {
        const pod = o.spec.template.spec;
        const c = container(o);
        assert.equal(pod.securityContext.runAsNonRoot, true, `${o.metadata.name} runs as non-root`);
        assert.equal(c.securityContext.readOnlyRootFilesystem, true, `${o.metadata.name}: read-only root`);
        assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
        const loosened =
          c.securityContext.privileged === true ||
          pod.securityContext.seccompProfile?.type === 'Unconfined' ||
          pod.securityContext.appArmorProfile?.type === 'Unconfined' ||
          c.securityContext.procMount === 'Unmasked';
        assert.equal(loosened, allowed(o), `${label}: ${o.metadata.name}`);
        if (!allowed(o)) assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      }
    };
    const isExec = (o: Obj) => o.metadata.name.endsWith('-worker-exec');
    check(render('minimal').objects, isExec, 'local sandbox: the exec pods only');
    check(render('all-roles').objects, () => false, 'docker backend: nothing loosened');
    check(render('minimal', ['--set', 'exec.backend=fargate']).objects, () => false, 'fargate backend');
    const locked = render('minimal', [
      '--set',
      'exec.sandbox.seccompUnconfined=false,exec.sandbox.appArmorUnconfined=false,exec.sandbox.procMountUnmasked=false',
    ]).objects;
    check(locked, () => false, 'every sandbox loosening off');
    const priv = render('minimal', ['--set', 'exec.sandbox.privileged=true']).objects;
    for (const o of deployments(priv))
      assert.equal(container(o).securityContext.privileged === true, isExec(o), `privileged: ${o.metadata.name}`);
    const exec = workers(render('minimal').objects).find(isExec)!;
    assert.equal(exec.spec.template.spec.hostUsers, false, 'Unmasked /proc in its own user namespace');
    assert.match(container(exec).image, /dreact-exec-worker/, 'the image with bubblewrap and python3');
    assert.equal(envValue(exec, 'DREACT_EXEC_BACKEND'), 'local');
    for (const w of workers(render('minimal').objects).filter((o) => !isExec(o)))
      assert.equal(envValue(w, 'DREACT_EXEC_BACKEND'), 'off', `${w.metadata.name} runs no code`);
  });

  test("the gateway's /mcp host names: its Service's DNS names, the Ingress host and gateway.hostnames", () => {
    const hosts = (set: string, extra: string[] = []) => {
      const gw = deployments(render(set, extra).objects).find((d) => d.metadata.name.endsWith('-gateway'))!;
      return (envValue(gw, 'DREACT_GATEWAY_HOSTNAMES') ?? '').split(',');
    };
    const prod = hosts('production');
    const svc = prod[0]!;
    assert.match(svc, /-gateway$/);
    for (const h of [
      svc,
      `${svc}.default`,
      `${svc}.default.svc`,
      `${svc}.default.svc.cluster.local`,
      'agents.acme.example',
    ])
      assert.ok(prod.includes(h), `production: ${h} in ${prod.join(',')}`);
    assert.ok(!hosts('minimal').includes('agents.acme.example'), 'no Ingress: no Ingress host');
    const more = hosts('minimal', ['--set-string', 'gateway.hostnames=mcp.acme.example\\,10.0.0.7']);
    assert.ok(more.includes('mcp.acme.example') && more.includes('10.0.0.7'), more.join(','));
  });

  test('secrets only by reference: no Secret rendered, every credential from a secretKeyRef or envFrom', () => {
    for (const set of ['minimal', 'production', 'all-roles']) {
      const { objects } = render(set);
      assert.ok(!objects.some((o) => o.kind === 'Secret'), `${set}: the chart writes no Secret`);
      for (const o of objects.filter((x) => x.kind === 'Deployment' || x.kind === 'Job'))
        for (const e of env(o))
          if (/(_KEYS?|TOKEN|SECRET|PASSWORD)$|^DATABASE_URL$/.test(e.name))
            assert.ok(
              e.valueFrom?.secretKeyRef && e.value === undefined,
              `${set} ${o.metadata.name}: ${e.name} by reference`,
            );
    }
    const { objects } = render('production');
    const models = workers(objects).find((o) => o.metadata.name.endsWith('-worker-models'))!;
    assert.equal(
      env(models).find((e) => e.name === 'TEMPORAL_API_KEY')?.valueFrom?.secretKeyRef?.name,
      'dreact-temporal-api-key',
    );
    assert.deepEqual(
      container(models).envFrom,
      [{ secretRef: { name: 'dreact-provider-keys' } }],
      'provider keys: the models role',
    );
    const tools = workers(objects).find((o) => o.metadata.name.endsWith('-worker-tools'))!;
    assert.deepEqual(
      container(tools).envFrom,
      [{ secretRef: { name: 'dreact-mcp-secrets' } }],
      'MCP secrets: the tools role',
    );
    const mtls = workers(render('all-roles').objects)[0]!;
    assert.equal(envValue(mtls, 'TEMPORAL_TLS_CLIENT_CERT_PATH'), '/etc/dreact/temporal-tls/tls.crt');
    assert.equal(envValue(mtls, 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'), '/etc/dreact/temporal-tls/ca.crt');
    assert.ok(
      mtls.spec.template.spec.volumes.some(
        (v: { secret?: { secretName: string } }) => v.secret?.secretName === 'dreact-temporal-mtls',
      ),
    );
    // A secret given inline is refused by the values schema (there is no field for it).
    const inline = helm([
      'template',
      'dr',
      chart,
      '-f',
      valuesFile('minimal'),
      '--set',
      'temporal.apiKey.value=sk-live-1',
    ]);
    assert.notEqual(inline.status, 0);
    assert.match(inline.stderr, /temporal\.apiKey|apiKey/);
  });

  test('terminationGracePeriodSeconds is above DREACT_SHUTDOWN_GRACE_SECONDS; a margin of 0 is refused', () => {
    for (const set of ['minimal', 'production', 'all-roles'])
      for (const w of workers(render(set).objects)) {
        const grace = Number(envValue(w, 'DREACT_SHUTDOWN_GRACE_SECONDS'));
        assert.ok(w.spec.template.spec.terminationGracePeriodSeconds > grace, `${set} ${w.metadata.name}`);
      }
    const r = helm([
      'template',
      'dr',
      chart,
      '-f',
      valuesFile('minimal'),
      '--set',
      'worker.terminationGraceMarginSeconds=0',
    ]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /terminationGraceMarginSeconds must be above 0/);
  });

  test('KEDA: a ScaledObject per role on its backlog and build id, with the API key by reference', () => {
    const { objects } = render('production');
    const scaled = objects.filter((o) => o.kind === 'ScaledObject');
    assert.equal(scaled.length, 4);
    for (const role of ROLES) {
      const so = scaled.find((o) => o.metadata.name.endsWith(`-worker-${role}`))!;
      assert.equal(so.spec.scaleTargetRef.name, so.metadata.name);
      const [trigger] = so.spec.triggers as Array<{
        type: string;
        metadata: Record<string, string>;
        authenticationRef: { name: string };
      }>;
      assert.equal(trigger!.type, 'temporal');
      assert.equal(trigger!.metadata.taskQueue, `dreact-${role}`);
      assert.equal(trigger!.metadata.queueTypes, role === 'workflows' ? 'workflow' : 'activity');
      assert.equal(trigger!.metadata.workerDeploymentName, 'acme-agents');
      assert.equal(trigger!.metadata.workerDeploymentBuildId, '0.1.0');
      assert.equal(trigger!.metadata.namespace, 'acme-prod.a1b2c');
      assert.equal(so.spec.maxReplicaCount, role === 'exec' ? 6 : 30, 'per-role overrides');
    }
    const auth = objects.find((o) => o.kind === 'TriggerAuthentication')!;
    assert.deepEqual(auth.spec.secretTargetRef, [
      { parameter: 'apiKey', name: 'dreact-temporal-api-key', key: 'api-key' },
    ]);
    for (const w of workers(objects)) assert.equal(w.spec.replicas, undefined, 'the scaler owns the replica count');
    const both = helm([
      'template',
      'dr',
      chart,
      '-f',
      valuesFile('production'),
      '--set',
      'autoscaling.hpa.enabled=true',
    ]);
    assert.match(both.stderr, /choose one/);
  });

  test('HPA alternative: the slot-utilisation metric per worker Deployment', () => {
    const hpas = render('all-roles').objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    assert.equal(hpas.length, 1);
    const [metric] = hpas[0]!.spec.metrics as Array<{
      type: string;
      pods: { metric: { name: string }; target: { averageValue: string } };
    }>;
    assert.equal(metric!.type, 'Pods');
    assert.equal(metric!.pods.metric.name, 'dreact_worker_slot_utilization');
    assert.equal(hpas[0]!.spec.scaleTargetRef.name, 'dr-durable-react-worker-all');
  });

  test('the migrations Job runs as a pre-install/pre-upgrade hook, before the workers', () => {
    const job = render('minimal').objects.find((o) => o.kind === 'Job')!;
    assert.equal(job.metadata.annotations?.['helm.sh/hook'], 'pre-install,pre-upgrade');
    assert.deepEqual(container(job).command, ['node', 'dist/migrate.cjs']);
  });

  test('bad values: a clear error naming the value', () => {
    const noDb = helm(['template', 'dr', chart, '--set', 'temporal.address=t:7233']);
    assert.match(noDb.stderr, /database\.existingSecret is required/);
    const mode = helm(['template', 'dr', chart, '-f', valuesFile('minimal'), '--set', 'worker.mode=some']);
    assert.match(mode.stderr, /'\/worker\/mode': value must be one of 'roles', 'all'/);
    const gw = helm(['template', 'dr', chart, '-f', valuesFile('minimal'), '--set', 'gateway.replicas=2']);
    assert.match(gw.stderr, /gateway\.tokenSecret\.existingSecret is required/);
  });
});
