// The route table itself: every route declares its auth requirement, its response schema and its
// path parameters; docs/permissions.md describes exactly the registered routes, and the API types
// the console and CLI are compiled against are generated from exactly this table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { API_TYPES_FILE, renderApiTypes } from '../../scripts/api-types.ts';
import { renderPermissionsDoc, PERMISSIONS_DOC } from '../../scripts/permissions-doc.ts';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { validateAuthRequirement } from '../../src/platform/http/auth.ts';
import { ajvFor } from '../../src/platform/http/validation.ts';
import { call, createTenant, startTestService, type TestService } from '../support/service.ts';
import { apiRoutes, isPluginRoute, pathParams } from '../support/routes.ts';

describe('route declarations [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite');
  });
  after(() => service?.stop());

  test('every route declares an auth requirement, a response schema and its path parameters', () => {
    const routes = apiRoutes(service);
    assert.ok(routes.length > 20, 'the table is populated');
    const problems: string[] = [];
    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      const authProblem = validateAuthRequirement({ method: route.method, url: route.url, config: { auth: route.auth } });
      if (authProblem) problems.push(authProblem);
      const responses = Object.keys(route.schema?.response ?? {});
      if (responses.length === 0) problems.push(`${name} declares no response schema`);
      for (const param of pathParams(route.url)) {
        if (!route.schema?.params?.properties?.[param]) problems.push(`${name} declares no schema for path parameter ${param}`);
      }
    }
    assert.deepEqual(problems, []);
    // Plugins are the only exception, and only under their declared prefixes.
    assert.ok(service.routes.some((r) => isPluginRoute(r.url)), 'the /docs plugin is registered');
  });

  test('every route\'s validators and response serializers compile (the server compiles them on first use)', () => {
    const bodyAjv = ajvFor(false);
    const otherAjv = ajvFor(true);
    // Shared schemas (the error body) as Fastify hands them to its compilers.
    const serializer = SerializerSelector()(service.app.getSchemas(), {});
    const problems: string[] = [];
    for (const route of service.routes) {
      const schema = route.schema as Record<string, any> | undefined;
      const name = `${route.method} ${route.url}`;
      for (const part of ['params', 'querystring', 'headers', 'body'] as const) {
        if (!schema?.[part]) continue;
        try {
          (part === 'body' ? bodyAjv : otherAjv).compile(schema[part]);
        } catch (error) {
          problems.push(`${name} ${part}: ${(error as Error).message}`);
        }
      }
      for (const [status, response] of Object.entries(schema?.response ?? {})) {
        try {
          serializer({ schema: response as object, method: route.method, url: route.url, httpStatus: status });
        } catch (error) {
          problems.push(`${name} response ${status}: ${(error as Error).message}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('every input is bounded: strings, arrays and open objects in params, query and body have a maximum', () => {
    const problems: string[] = [];
    const walk = (schema: any, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const types = [schema.type].flat();
      if (types.includes('string') && schema.maxLength === undefined && schema.enum === undefined && schema.const === undefined && !['uuid', 'date-time'].includes(schema.format)) problems.push(`${where}: a string without maxLength`);
      if (types.includes('array') && schema.maxItems === undefined) problems.push(`${where}: an array without maxItems`);
      const closed = schema.additionalProperties === false || (typeof schema.additionalProperties === 'object' && Object.keys(schema.additionalProperties).join() === 'not');
      const open = schema.patternProperties !== undefined || (types.includes('object') && schema.additionalProperties !== undefined && !closed);
      if (open && schema.maxProperties === undefined) problems.push(`${where}: an open object without maxProperties`);
      for (const [key, sub] of Object.entries(schema.properties ?? {})) walk(sub, `${where}.${key}`);
      for (const sub of Object.values(schema.patternProperties ?? {})) walk(sub, `${where}[*]`);
      if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}[*]`);
      if (schema.items) walk(schema.items, `${where}[]`);
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const sub of schema[key] ?? []) walk(sub, where);
    };
    for (const route of apiRoutes(service)) {
      for (const part of ['params', 'querystring', 'body'] as const) walk(route.schema?.[part], `${route.method} ${route.url} ${part}`);
    }
    assert.deepEqual(problems, []);
  });

  test('every pattern an input must match is said in words: a refusal never shows a regular expression', async () => {
    const problems: string[] = [];
    const walk = (schema: any, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      if (schema.pattern !== undefined && typeof schema['x-pattern-means'] !== 'string') problems.push(`${where}: a pattern without x-pattern-means`);
      walk(schema.propertyNames, `${where} (keys)`);
      for (const [key, sub] of Object.entries(schema.properties ?? {})) walk(sub, `${where}.${key}`);
      if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}[*]`);
      if (schema.items) walk(schema.items, `${where}[]`);
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const sub of schema[key] ?? []) walk(sub, where);
    };
    for (const route of apiRoutes(service)) {
      for (const part of ['params', 'querystring', 'body'] as const) walk(route.schema?.[part], `${route.method} ${route.url} ${part}`);
    }
    assert.deepEqual(problems, []);
    // What a client sees: the words, and the values a union of constants takes.
    const tenant = await createTenant(service, 'words');
    const named = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: 'a/b' } });
    assert.deepEqual([named.status, named.body.error.message], [400, 'body.name must not contain "/", "\\" or control characters']);
    const feed = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/feeds`, { token: tenant.apiKey, json: { name: 'f', visibility: 'everyone' } });
    assert.deepEqual([feed.status, feed.body.error.message], [400, 'body.visibility must be one of "public", "project", "private"']);
    const email = await call(service, 'POST', '/setup', { json: { token: 'x', email: 'not an address', password: 'a long password', project_name: 'p' } });
    assert.deepEqual([email.status, email.body.error.message], [400, 'body.email must be an email address']);
  });

  test('docs/permissions.md is up to date', () => {
    const expected = renderPermissionsDoc(service.routes, service.ctx.authority);
    let committed = '';
    try {
      committed = readFileSync(PERMISSIONS_DOC, 'utf8');
    } catch {
      // missing: reported below
    }
    assert.ok(committed === expected, 'docs/permissions.md is stale or missing: run `npm run docs:permissions` and commit the result');
  });

  test('the console\'s API types (src/api-client/schema.ts) match the live /openapi.json', async () => {
    const expected = await renderApiTypes(service.app.swagger());
    let committed = '';
    try {
      committed = readFileSync(API_TYPES_FILE, 'utf8');
    } catch {
      // missing: reported below
    }
    assert.ok(committed === expected, 'src/api-client/schema.ts is stale or missing: run `npm run api:types` and commit the result');
  });
});
