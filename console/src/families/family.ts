// What a resource family contributes to the console: an entry in the project navigation, shown to
// users holding `needs`, and its routes under /console/p/:projectId/<path>, each page loaded only
// when opened. Adding a family is a folder with an index.ts exporting one of these, and one line in
// families/index.ts (docs/contributing/console.md).
import type { ComponentType } from 'react';
import type { RouteObject } from 'react-router';
import type { Role } from '../api.ts';

export interface Family {
  id: string;
  label: string;
  /** The first path segment under the project; '' for the project's own page. */
  path: string;
  /** The role that makes the family worth showing (its list route's permission). */
  needs: Role;
  routes: RouteObject[];
}

/** A route whose page module is fetched when first visited (route-level code splitting). */
export function lazyPage(path: string | undefined, load: () => Promise<{ default: ComponentType }>): RouteObject {
  const lazy = async () => ({ Component: (await load()).default });
  return path === undefined ? { index: true, lazy } : { path, lazy };
}
