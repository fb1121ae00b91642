// Operational endpoints: health, readiness, metrics, the OpenAPI document and the reference page.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { call, forEachEngine, startTestService, type TestService } from '../support/service.ts';
import { documentedPath } from '../../src/app.ts';
import { apiRoutes } from '../support/routes.ts';

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[];
  security?: unknown[];
}
type OpenApi = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

forEachEngine('system endpoints', (engine) => {
  let service: TestService;
  before(async () => {
    service = await startTestService(engine);
  });
  after(() => service?.stop());

  test('/healthz and /readyz', async () => {
    const health = await call(service, 'GET', '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { ok: true });
    const ready = await call(service, 'GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { ok: true, database: engine });
  });

  test('/metrics is Prometheus text with request latencies', async () => {
    await call(service, 'GET', '/healthz');
    const response = await fetch(`${service.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    assert.match(text, /# TYPE atrium_http_request_duration_seconds histogram/);
    assert.match(text, /atrium_http_request_duration_seconds_bucket\{[^}]*route="\/healthz"/);
    assert.match(text, /process_cpu_user_seconds_total/);
  });

  test('/openapi.json is a valid OpenAPI 3.1 document listing every route', async () => {
    const response = await call<OpenApi>(service, 'GET', '/openapi.json');
    assert.equal(response.status, 200);
    const doc = response.body;
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
    assert.ok(doc.components?.securitySchemes?.bearer, 'the bearer scheme is declared');

    // Every schema in the document is valid JSON Schema 2020-12 (OpenAPI 3.1's dialect).
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addFormat('binary', true);
    ajv.addSchema(doc as object, 'openapi');
    const pointer = (...parts: string[]) => `openapi#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
    for (const name of Object.keys(doc.components?.schemas ?? {})) ajv.compile({ $ref: pointer('components', 'schemas', name) });

    const operations = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      assert.match(path, /^\//);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, operation] of Object.entries(item)) {
        if (!HTTP_METHODS.includes(method)) continue;
        const where = `${method.toUpperCase()} ${path}`;
        operations.add(where);
        assert.ok(operation.responses && Object.keys(operation.responses).length > 0, `${where} declares responses`);
        const declared = (operation.parameters ?? []).filter((p) => p.in === 'path');
        for (const name of templated) {
          const param = declared.find((p) => p.name === name);
          assert.ok(param?.required, `${where} declares path parameter ${name}`);
        }
        for (const [status, res] of Object.entries(operation.responses ?? {})) {
          for (const [type, media] of Object.entries(res.content ?? {})) {
            if (media.schema) assert.doesNotThrow(() => ajv.compile({ $ref: pointer('paths', path, method, 'responses', status, 'content', type, 'schema') }), `${where} ${status} ${type}`);
          }
        }
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
          if (media.schema) assert.doesNotThrow(() => ajv.compile({ $ref: pointer('paths', path, method, 'requestBody', 'content', type, 'schema') }), `${where} body ${type}`);
        }
      }
    }

    for (const route of apiRoutes(service)) {
      if (route.schema?.hide) continue;
      const path = documentedPath(route.url);
      const where = `${route.method} ${path}`;
      assert.ok(operations.has(where), `${where} is in the OpenAPI document`);
      const operation = doc.paths[path]![route.method.toLowerCase()]!;
      if (route.auth?.permission === 'public') assert.deepEqual(operation.security, [], `${where} is public`);
      else assert.deepEqual(operation.security, [{ bearer: [] }], `${where} needs a bearer credential`);
    }
  });

  test('/docs serves the API reference page', async () => {
    const response = await fetch(`${service.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    const html = await response.text();
    assert.match(html, /<html/i);
    assert.match(html, /swagger|api reference/i);
  });

  if (engine === 'postgres') {
    test('an instance with another secret key than its peers refuses to start, saying why', async () => {
      await assert.rejects(startTestService(engine, { DATABASE_URL: service.ctx.config.databaseUrl!, ATRIUM_SECRET_KEY: Buffer.alloc(32, 9).toString('base64') }), /same ATRIUM_SECRET_KEY/);
    });
  }

  test('unknown routes are a 404 in the error format', async () => {
    const r = await call(service, 'GET', '/no/such/route');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
    const wrongMethod = await call(service, 'PATCH', '/healthz');
    assert.equal(wrongMethod.status, 404);
    assert.equal(typeof wrongMethod.body.error.message, 'string');
  });
});
