// Helpers for suites that walk the registered route table (isolation, bad input, declarations), so
// route families added later are covered without touching those suites.
import { randomUUID } from 'node:crypto';
import { PLUGIN_ROUTE_PREFIXES } from '../../src/app.ts';
import type { AuthRequirement } from '../../src/platform/http/auth.ts';
import type { RunningService } from '../../src/main.ts';

export interface RouteInfo {
  method: string;
  url: string;
  auth: AuthRequirement | undefined;
  schema: RouteSchema | undefined;
}

export interface RouteSchema {
  params?: { properties?: Record<string, { format?: string; pattern?: string }> };
  querystring?: { properties?: Record<string, unknown>; required?: string[] };
  body?: unknown;
  response?: Record<string, unknown>;
  hide?: boolean;
}

export function isPluginRoute(url: string): boolean {
  return PLUGIN_ROUTE_PREFIXES.some((p) => url === p || url.startsWith(`${p}/`));
}

/** Every registered route except those served by plugins (e.g. the /docs page), once per method. */
export function apiRoutes(service: Pick<RunningService, 'routes'>): RouteInfo[] {
  const seen = new Set<string>();
  const out: RouteInfo[] = [];
  for (const route of service.routes) {
    if (isPluginRoute(route.url)) continue;
    const key = `${route.method} ${route.url}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      method: route.method,
      url: route.url,
      auth: (route.config as { auth?: AuthRequirement } | undefined)?.auth,
      schema: route.schema as RouteSchema | undefined,
    });
  }
  return out.sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
}

export function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

/**
 * Fills `:param`s: known values first, else a random UUID where the schema wants one (or the name
 * looks like an id), else a plausible name.
 */
export function fillPath(route: RouteInfo, values: Record<string, string | undefined>): string {
  return route.url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    const known = values[name];
    if (known !== undefined) return encodeURIComponent(known);
    const format = route.schema?.params?.properties?.[name]?.format;
    if (format === 'uuid' || name === 'id' || name.endsWith('_id')) return randomUUID();
    return `probe-${name.replaceAll('_', '-')}`;
  });
}

/** A query string satisfying the route's required query parameters with harmless values. */
export function requiredQuery(route: RouteInfo, values: Record<string, string> = {}): string {
  const required = route.schema?.querystring?.required ?? [];
  if (required.length === 0) return '';
  const params = new URLSearchParams();
  for (const name of required) params.set(name, values[name] ?? 'probe.txt');
  return `?${params}`;
}

export function hasJsonBody(route: RouteInfo): boolean {
  return route.schema?.body !== undefined && (route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH');
}
