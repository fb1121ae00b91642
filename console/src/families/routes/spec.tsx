// A route's editor: a RouteSpec in YAML or JSON (YAML reads both), sent as {spec}.
import { parse, stringify } from 'yaml';
import { ApiError, type ResponseOf } from '../../api.ts';
import type { Field } from '../../ui/FormModal.tsx';

export type Route = ResponseOf<'/accounts/projects/{project_id}/routes', 'get'>['routes'][number];

export const ROUTE_TEMPLATE = `version: v1
kind: Route
metadata:
  name: app
domain: app.example.com
backend:
  room:
    name: lobby
paths:
  - path: /
    pathType: prefix
    targetPort: 8080
`;

export const SPEC_FIELDS: Field[] = [{
  kind: 'code',
  name: 'spec',
  label: 'Spec (YAML or JSON)',
  required: true,
  description: <>A RouteSpec: the domain, a backend (a room or a managed agent) and its paths, each to a port or fixed content.</>,
}];

class SpecError extends Error {}

export function routeBody(text: string): { spec: Record<string, unknown> } {
  let spec: unknown;
  try {
    spec = parse(text);
  } catch (error) {
    throw new SpecError(`spec is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw new SpecError('spec must be a mapping (version: v1, kind: Route, …)');
  return { spec: spec as Record<string, unknown> };
}

export const specText = (route: Route) => stringify(route.spec);

/** The API's validation errors (400, a taken domain's 409, a missing room's 404) are about the spec. */
export function specErrorField(error: unknown): string | undefined {
  if (error instanceof SpecError) return 'spec';
  if (error instanceof ApiError && [400, 404, 409].includes(error.status)) return 'spec';
  return undefined;
}

export const backendOf = (route: Route) => route.room_name ? `room ${route.room_name}` : route.agent_name ? `agent ${route.agent_name}` : '—';
