// The API client every page uses (src/api-client, generated from /openapi.json), signed in as the
// console's user, and the types of the API's bodies by path and method.
import { createApiClient, type paths } from '../../src/api-client/client.ts';
import { accessToken } from './auth/session.ts';
import { PUBLIC_URL } from './config.ts';

export { ApiError, unwrap } from '../../src/api-client/client.ts';

export const api = createApiClient({ baseUrl: PUBLIC_URL, credential: accessToken });

/** For the routes that take no credential (first-run setup). */
export const publicApi = createApiClient({ baseUrl: PUBLIC_URL });

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type Success<Op> = Op extends { responses: infer R } ? JsonOf<R[Extract<keyof R, 200 | 201 | 202>]> : never;

/** The JSON a route answers with on success: `ResponseOf<'/accounts/projects/{project_id}/rooms', 'get'>`. */
export type ResponseOf<P extends keyof paths, M extends keyof paths[P]> = Success<paths[P][M]>;

/** The JSON body a route takes. */
export type BodyOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type Role = ResponseOf<'/accounts/projects/{project_id}/role', 'get'>['roles'][number];
export type Project = ResponseOf<'/accounts/projects/{project_id}', 'get'>;
