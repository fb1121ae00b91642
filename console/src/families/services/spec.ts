// The service spec editor's text: YAML or JSON (YAML reads both), a ServiceSpec or a ServiceTemplate.
// A spec is sent as the body; a template is sent as it was typed, with its values, and the API
// renders it (docs/services.md#templates).
import { parse, stringify } from 'yaml';
import { ApiError } from '../../api.ts';

export const SPEC_TEMPLATE = `version: v1
kind: Service
metadata:
  name: echo
container:
  image: ghcr.io/example/echo:1
ports:
  - num: 8080
    type: http
`;

/** A mistake in the editor's text, found before it is sent. */
export class SpecError extends Error {}

export type SpecBody = { template: string; values: Record<string, string> } | Record<string, unknown>;

export function specBody(text: string, valuesText: string): SpecBody {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new SpecError(`spec is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new SpecError('spec must be a mapping (version: v1, kind: Service, …)');
  const kind = (document as { kind?: unknown }).kind;
  if (kind === 'ServiceTemplate') {
    let values: unknown = {};
    if (valuesText.trim() !== '') {
      try {
        values = JSON.parse(valuesText);
      } catch {
        throw new SpecError('values must be a JSON object of strings');
      }
    }
    if (values === null || typeof values !== 'object' || Array.isArray(values)) throw new SpecError('values must be a JSON object of strings');
    return { template: text, values: values as Record<string, string> };
  }
  if (valuesText.trim() !== '') throw new SpecError('values are for a ServiceTemplate: this spec is not one');
  return document as Record<string, unknown>;
}

/** A stored spec as the editor shows it: YAML, without its id. */
export function specText(service: { id: string } & Record<string, unknown>): string {
  const { id: _id, ...spec } = service;
  return stringify(spec);
}

/** Errors about the spec's contents show under the editor; those about a value under the values. */
export function specErrorField(error: unknown): string | undefined {
  if (error instanceof SpecError) return error.message.startsWith('values') ? 'values' : 'spec';
  if (error instanceof ApiError && [400, 409, 413].includes(error.status)) return 'spec';
  return undefined;
}

export interface ServiceSummary {
  name: string;
  runs: string;
  ports: string;
}

/** What a list row shows of a spec. */
export function summary(service: Record<string, unknown>): ServiceSummary {
  const metadata = (service.metadata ?? {}) as { name?: string };
  const container = service.container as { image?: string } | undefined;
  const external = service.external as { url?: string } | undefined;
  const ports = (service.ports ?? []) as { num?: number | string; type?: string }[];
  return {
    name: metadata.name ?? '—',
    runs: container?.image ?? external?.url ?? '—',
    ports: ports.map((port) => `${port.num ?? '?'}${port.type ? `/${port.type}` : ''}`).join(', ') || '—',
  };
}
