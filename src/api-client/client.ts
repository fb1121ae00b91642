// The typed client of the Atrium API, shared by the web console and the CLI: openapi-fetch over
// the types generated from /openapi.json (schema.ts, `npm run api:types`), so a call that does not
// match a route's declared path, parameters or body does not compile.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { paths } from './schema.ts';
export type ApiClient = Client<paths>;

/** The error body of every API route: `{"error": {"code", "message", "request_id"}}`. */
export interface ApiErrorBody {
  error: { code: string; message: string; request_id?: string };
}

/** An API call that did not succeed, with the API's own code and message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, body: unknown) {
    const error = (body as Partial<ApiErrorBody> | undefined)?.error;
    super(error?.message ?? `The server answered ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = error?.code ?? 'http_error';
  }
}

export interface ApiClientOptions {
  baseUrl: string;
  /** The bearer credential for each request (refreshed by the caller as needed); none for public routes. */
  credential?: () => Promise<string>;
  fetch?: typeof globalThis.fetch;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const { credential } = options;
  if (credential) {
    client.use({
      async onRequest({ request }) {
        request.headers.set('authorization', `Bearer ${await credential()}`);
        return request;
      },
    });
  }
  return client;
}

/** The data of a call, or its failure thrown as an ApiError. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new ApiError(response.status, error);
  return data as T;
}
