// The console's pages. Signed-in pages sit in the shell; a project's pages come from the families
// (families/index.ts), each loaded when first opened.
import { createBrowserRouter } from 'react-router';
import { BASE_PATH } from '../config.ts';
import { families } from '../families/index.ts';
import { lazyPage } from '../families/family.ts';
import { ProjectScope } from './project.tsx';
import { Shell } from './Shell.tsx';

/** Created once signed in: the router reads the address when it is made (after /callback has been replaced). */
export const createRouter = () => createBrowserRouter([
  lazyPage('setup', () => import('../pages/Setup.tsx')),
  lazyPage('signed-out', () => import('../pages/SignedOut.tsx')),
  {
    path: '/',
    Component: Shell,
    // Shown while the first page's code loads.
    HydrateFallback: () => null,
    children: [
      lazyPage(undefined, () => import('../pages/Home.tsx')),
      lazyPage('profile', () => import('../pages/Profile.tsx')),
      { path: 'p/:projectId', Component: ProjectScope, children: families.flatMap((family) => family.routes) },
      lazyPage('*', () => import('../pages/NotFound.tsx')),
    ],
  },
], { basename: BASE_PATH });
