// Helpers for suites that walk the registered route table (isolation, bad input, declarations), so
// route families added later are covered without touching those suites.
import { documentedPath, PLUGIN_ROUTE_PREFIXES } from '../../src/app.ts';
import type { AuthRequirement } from '../../src/platform/http/auth.ts';
import type { RunningService } from '../../src/main.ts';

export interface RouteInfo {
  method: string;
  url: string;
  auth: AuthRequirement | undefined;
  schema: RouteSchema | undefined;
  /** The module that declared it. */
  module: string | undefined;
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
      module: route.module,
    });
  }
  return out.sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
}

export function pathParams(url: string): string[] {
  return [...documentedPath(url).matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
}

/** The path a client sends for a route: each parameter's text from `fill` (already encoded). */
export function fillPath(url: string, fill: (name: string) => string): string {
  return documentedPath(url).replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => fill(name));
}
