// Server state: one TanStack Query client; keys start with the project they belong to, so a change
// invalidates exactly its family's lists and details.
import { QueryClient } from '@tanstack/react-query';
import { ApiError } from '../api.ts';

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
