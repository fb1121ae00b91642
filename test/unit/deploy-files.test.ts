// The deployment files, read as an operator's tools read them, without starting anything: the
// Containerfile runs the server as bin/serve-flags.js and src/cli/server-env.ts say and its defaults
// pass the server's own rules for a network address; both compose files name the same settings, each
// one a real setting, and lock the instances down alike; the Kubernetes manifest validates against
// the Kubernetes API schemas (kubernetes-models) and follows the same rules with the same settings.
// test/container/image.ts builds the image and starts the compose files.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { SERVE_NODE_FLAGS } from '../../bin/serve-flags.js';
import { SERVER_ENV } from '../../src/cli/server-env.ts';
import { ConfigError, loadConfig, SETTINGS } from '../../src/config.ts';
import { listSettings } from '../../src/platform/settings/table.ts';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The Containerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  const lines = text.split('\n').filter((line) => !/^\s*#/.test(line));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  return joined.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => {
    const [op, ...rest] = line.split(/\s+/);
    return { op: op!.toUpperCase(), args: rest.join(' ') };
  });
}

const containerfile = instructions(read('Containerfile'));
const one = (op: string) => {
  const found = containerfile.filter((i) => i.op === op);
  assert.equal(found.length, 1, `one ${op} in the Containerfile`);
  return found[0]!.args;
};
const imageEnv: Record<string, string> = Object.fromEntries(
  containerfile.filter((i) => i.op === 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
);
const [imageUid, imageGid] = one('USER').split(':').map(Number);

const settingNames = new Set(listSettings(SETTINGS).map((s) => s.env));
// Read by the AWS SDK's credential chain for the S3 store, not by the settings table.
const AWS_NAMES = new Set(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']);

/** Compose interpolation with example values for the variables an operator must set. */
function interpolate(value: string, chosen: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_, name: string, kind?: string, rest?: string) => {
    if (chosen[name] !== undefined) return chosen[name];
    assert.notEqual(kind, '?', `an example value for ${name}, which the compose files require`);
    return kind === '-' ? rest! : '';
  });
}

const EXAMPLE_CHOICES = {
  ATRIUM_PUBLIC_URL: 'http://localhost:8000',
  ATRIUM_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'),
  ATRIUM_SMTP_URL: 'smtp://mail.example.test:25',
  POSTGRES_PASSWORD: 'example',
};

const COMPOSE_FILES = ['compose.yaml', 'deploy/compose/replicas.yaml'];
const compose = (path: string) => parse(read(path), { merge: true }) as {
  'x-atrium-settings': Record<string, string>;
  services: Record<string, Record<string, unknown> & { environment?: Record<string, string> }>;
};

test('Containerfile: Node runs the server as PID 1 with its flags and environment, as a numbered non-root user', () => {
  assert.deepEqual(JSON.parse(one('ENTRYPOINT')), ['node', ...SERVE_NODE_FLAGS, 'src/cli/main.ts']);
  assert.deepEqual(JSON.parse(one('CMD')), ['serve']);
  for (const [name, value] of Object.entries(SERVER_ENV)) assert.equal(imageEnv[name], value, `ENV ${name}`);
  assert.ok(Number.isInteger(imageUid) && imageUid! > 0 && Number.isInteger(imageGid) && imageGid! > 0, 'USER uid:gid, numeric (what Kubernetes needs to verify runAsNonRoot)');
  assert.match(one('HEALTHCHECK'), /\/readyz/);
  assert.equal(one('VOLUME'), imageEnv.ATRIUM_DATA_DIR);
  assert.ok(containerfile.some((i) => i.op === 'ARG' && /^BASE=\S+$/.test(i.args)), 'the base image is a build argument with a default');
  assert.equal(one('FROM'), '${BASE}');
});

test('the image\'s defaults serve the network, so the server starts only with mail or PostgreSQL set, and says which', () => {
  const env = { ...imageEnv };
  assert.equal(env.HOST, '0.0.0.0');
  assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && /development mailbox/.test(error.message) && /ATRIUM_SMTP_URL/.test(error.message));
  for (const path of COMPOSE_FILES) {
    const settings = compose(path).services.atrium!.environment!;
    const config = loadConfig({ ...env, ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, interpolate(v, EXAMPLE_CHOICES)])) });
    assert.equal(config.host, '0.0.0.0', path);
    assert.equal(config.mail.transport, 'smtp', path);
    assert.equal(config.mail.devMailbox, false, path);
    assert.equal(config.signin.emailLogin, true, path);
    assert.match(config.databaseUrl ?? '', /^postgres:\/\/atrium:example@postgres:5432\/atrium$/, path);
  }
});

test('compose files: the same settings to choose in both, each a setting of the server, instances locked down alike', () => {
  const [trial, replicas] = COMPOSE_FILES.map(compose);
  assert.deepEqual(replicas!['x-atrium-settings'], trial!['x-atrium-settings']);
  for (const chosen of ['ATRIUM_PUBLIC_URL', 'ATRIUM_SECRET_KEY', 'ATRIUM_SMTP_URL', 'DATABASE_URL']) {
    assert.match(trial!['x-atrium-settings'][chosen] ?? '', /\$\{\w+:\?[^}]+\}/, `${chosen} is required, with a message`);
  }
  for (const [i, file] of [trial!, replicas!].entries()) {
    const atrium = file.services.atrium!;
    for (const name of Object.keys(atrium.environment!)) assert.ok(settingNames.has(name), `${COMPOSE_FILES[i]}: ${name} is a setting`);
    assert.equal(atrium.read_only, true);
    assert.deepEqual(atrium.cap_drop, ['ALL']);
    assert.deepEqual(atrium.tmpfs, ['/tmp']);
    assert.ok((atrium.volumes as string[]).some((v) => v.endsWith(`:${imageEnv.ATRIUM_DATA_DIR}`)), 'the data directory is a volume');
    assert.ok(atrium.user === undefined || atrium.user === `${imageUid}:${imageGid}`);
  }
  assert.equal(replicas!.services.atrium!.environment!.ATRIUM_TRUST_PROXY, '1', 'one proxy hop in front of the replicas');
  assert.ok(((replicas!.services.atrium!.deploy as { replicas: number }).replicas) > 1);
  assert.match(read('deploy/compose/Caddyfile'), /dynamic a atrium 8000/, 'the proxy finds every replica of the `atrium` service');
});

type Manifest = ConfigMap | Deployment | Service | PodDisruptionBudget;
const MODELS: Record<string, new (data: never) => Manifest> = {
  'v1/ConfigMap': ConfigMap, 'v1/Service': Service, 'apps/v1/Deployment': Deployment, 'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

function manifests(text: string): Manifest[] {
  return parseAllDocuments(text).map((doc) => {
    const data = doc.toJS() as { apiVersion: string; kind: string };
    const Model = MODELS[`${data.apiVersion}/${data.kind}`];
    assert.ok(Model, `a model for ${data.apiVersion} ${data.kind}`);
    return new Model(data as never);
  });
}

test('Kubernetes manifest: every object validates against the Kubernetes API schemas', () => {
  const objects = manifests(read('deploy/kubernetes/atrium.yaml'));
  assert.deepEqual(objects.map((o) => o.kind).sort(), ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service']);
  for (const object of objects) object.validate();
  // The validator refuses what the API server would: a replica count as a string, a probe without a port.
  const wrong = read('deploy/kubernetes/atrium.yaml').replace(/replicas: (\d+)/, 'replicas: "$1"');
  assert.throws(() => manifests(wrong).forEach((o) => o.validate()), /replicas must be integer/);
  const portless = read('deploy/kubernetes/atrium.yaml').replace('httpGet: { path: /healthz, port: http }', 'httpGet: { path: /healthz }');
  assert.throws(() => manifests(portless).forEach((o) => o.validate()), /port/);
});

test('Kubernetes manifest: the rules and the settings of the compose files', () => {
  const text = read('deploy/kubernetes/atrium.yaml');
  const objects = manifests(text);
  const deployment = objects.find((o): o is Deployment => o.kind === 'Deployment')!;
  const configMap = objects.find((o): o is ConfigMap => o.kind === 'ConfigMap')!;
  const pod = deployment.spec!.template.spec!;
  const [container] = pod.containers;
  assert.ok(deployment.spec!.replicas! > 1);
  assert.equal(pod.securityContext?.runAsNonRoot, true);
  assert.equal(pod.securityContext?.runAsUser, imageUid);
  assert.equal(pod.securityContext?.runAsGroup, imageGid);
  assert.equal(container!.securityContext?.readOnlyRootFilesystem, true);
  assert.equal(container!.securityContext?.allowPrivilegeEscalation, false);
  assert.deepEqual(container!.securityContext?.capabilities?.drop, ['ALL']);
  assert.equal(container!.readinessProbe?.httpGet?.path, '/readyz');
  assert.equal(container!.startupProbe?.httpGet?.path, '/readyz');
  assert.deepEqual(container!.volumeMounts?.map((m) => m.mountPath).sort(), [imageEnv.ATRIUM_DATA_DIR, '/tmp'].sort());
  assert.deepEqual(container!.envFrom?.map((e) => e.configMapRef?.name ?? e.secretRef?.name), [configMap.metadata!.name, configMap.metadata!.name]);

  // The Secret is made by the operator, as the header says: its keys are those of that command.
  const secretKeys = [...text.matchAll(/--from-literal=(\w+)=/g)].map((m) => m[1]!);
  const configKeys = [...Object.keys(configMap.data!), ...[...text.matchAll(/^\s*#\s*(ATRIUM_\w+):/gm)].map((m) => m[1]!)];
  for (const name of [...secretKeys, ...configKeys]) assert.ok(settingNames.has(name) || AWS_NAMES.has(name), `${name} is a setting`);
  const trial = compose('compose.yaml');
  for (const name of Object.keys(trial.services.atrium!.environment!)) {
    assert.ok(secretKeys.includes(name) || configKeys.includes(name), `${name}, which the compose files set, is set on Kubernetes too`);
  }
  for (const name of ['ATRIUM_SECRET_KEY', 'DATABASE_URL', 'ATRIUM_SMTP_URL']) assert.ok(secretKeys.includes(name), `${name} comes from the Secret`);
  assert.ok(configMap.data!.ATRIUM_S3_BUCKET, 'several pods share files through a bucket');
  assert.equal(configMap.data!.ATRIUM_TRUST_PROXY, '1');
  const secret: Record<string, string> = {
    ATRIUM_SECRET_KEY: EXAMPLE_CHOICES.ATRIUM_SECRET_KEY, ATRIUM_SMTP_URL: EXAMPLE_CHOICES.ATRIUM_SMTP_URL,
    DATABASE_URL: 'postgres://atrium:example@db.internal:5432/atrium', AWS_ACCESS_KEY_ID: 'example', AWS_SECRET_ACCESS_KEY: 'example',
  };
  assert.deepEqual(secretKeys.sort(), Object.keys(secret).sort());
  const config = loadConfig({ ...imageEnv, ...configMap.data, ...secret });
  assert.equal(config.s3.bucket, configMap.data!.ATRIUM_S3_BUCKET);
  assert.equal(config.mail.transport, 'smtp');
});
