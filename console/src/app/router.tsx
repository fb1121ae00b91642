// The console's pages. Signed-in pages sit in the shell; a project's pages come from the families
// (families/index.ts), each loaded when first opened.
import { createBrowserRouter } from 'react-router';
import { BASE_PATH } from '../config.ts';
import { families } from '../families/index.ts';
import { lazyPage } from '../families/family.ts';
import { ProjectScope } from './project.tsx';
import { meQuery, projectQuery, projectsQuery, queryClient, roleQuery } from './query.ts';
import { Shell } from './Shell.tsx';

// The loaders only start the shell's and the project's queries (they never wait for them), so the
// requests run while the page's code loads; the components read the same queries from the cache.
const prefetch = (...queries: { queryKey: readonly unknown[]; queryFn: () => Promise<unknown> }[]) => {
  for (const query of queries) void queryClient.prefetchQuery(query);
  return null;
};

/** Created once signed in: the router reads the address when it is made (after /callback has been replaced). */
export const createRouter = () => createBrowserRouter([
  lazyPage('setup', () => import('../pages/Setup.tsx')),
  lazyPage('signed-out', () => import('../pages/SignedOut.tsx')),
  {
    path: '/',
    Component: Shell,
    loader: () => prefetch(projectsQuery, meQuery),
    // Shown while the first page's code loads.
    HydrateFallback: () => null,
    children: [
      lazyPage(undefined, () => import('../pages/Home.tsx')),
      lazyPage('profile', () => import('../pages/Profile.tsx')),
      { path: 'p/:projectId', Component: ProjectScope, loader: ({ params }) => prefetch(projectQuery(params.projectId!), roleQuery(params.projectId!)), children: families.flatMap((family) => family.routes) },
      lazyPage('*', () => import('../pages/NotFound.tsx')),
    ],
  },
], { basename: BASE_PATH });
