// Server state: one TanStack Query client; keys start with the project they belong to, so a change
// invalidates exactly its family's lists and details.
import { QueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap } from '../api.ts';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A refusal or a missing resource will not change by asking again.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
    },
  },
});

/** The cache key of something in a project: `projectKey(id, 'rooms')`. */
export const projectKey = (projectId: string, ...rest: unknown[]) => ['projects', projectId, ...rest] as const;

export const invalidate = (key: readonly unknown[]) => queryClient.invalidateQueries({ queryKey: key });

// What the shell and a project's pages need on every page. The router's loaders start them while
// the page's code is still loading (router.tsx), so the first page does not wait for its code and
// then for its data.
export const projectsQuery = { queryKey: ['projects'], queryFn: () => unwrap(api.GET('/accounts/projects')) } as const;
export const meQuery = { queryKey: ['me'], queryFn: () => unwrap(api.GET('/accounts/profiles/{user_id}', { params: { path: { user_id: 'me' } } })) } as const;
export const projectQuery = (projectId: string) => ({
  queryKey: projectKey(projectId),
  queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}', { params: { path: { project_id: projectId } } })),
});
export const roleQuery = (projectId: string) => ({
  queryKey: projectKey(projectId, 'role'),
  queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/role', { params: { path: { project_id: projectId } } })),
});

/**
 * What the signed-in user may do on one resource (`room.update`, `feed.publish`…), as the API decides
 * it for every route: pages show a button only for an action in the answer. No id yet: nothing.
 */
export function rightsQuery(projectId: string, type: string, id: string | undefined) {
  return {
    queryKey: projectKey(projectId, 'rights', type, id),
    queryFn: async () => (await unwrap(api.GET('/accounts/projects/{project_id}/rights/{resource_type}/{resource_id}', { params: { path: { project_id: projectId, resource_type: type, resource_id: id! } } }))).rights,
    enabled: id !== undefined,
  };
}
