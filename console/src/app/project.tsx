// The project being worked on, and what the signed-in user may do in it: the roles the API reports
// (implied ones included), so pages offer only what the API would allow.
import { Alert, Center, Loader } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { createContext, useContext } from 'react';
import { Outlet, useParams } from 'react-router';
import type { Project, Role } from '../api.ts';
import { errorText } from '../ui/feedback.tsx';
import { projectQuery, rightsQuery, roleQuery } from './query.ts';

export interface ProjectAccess {
  projectId: string;
  project: Project;
  can: (role: Role) => boolean;
  /** A console path inside this project: `path('rooms')`. */
  path: (sub?: string) => string;
}

const ProjectContext = createContext<ProjectAccess | undefined>(undefined);

export function useProject(): ProjectAccess {
  const access = useContext(ProjectContext);
  if (!access) throw new Error('useProject outside a project page');
  return access;
}

/**
 * What the user may do on one resource of this project (`may('update')`), from the API's answer for
 * it; nothing while it loads or before the resource's id is known.
 */
export function useRights(type: string, id: string | undefined): (action: string) => boolean {
  const { projectId } = useProject();
  const rights = useQuery(rightsQuery(projectId, type, id));
  return (action) => rights.data?.includes(action) ?? false;
}

export function ProjectScope() {
  const projectId = useParams().projectId!;
  const project = useQuery(projectQuery(projectId));
  const role = useQuery(roleQuery(projectId));
  if (project.error || role.error) return <Alert color="red" title="This project cannot be opened">{errorText(project.error ?? role.error)}</Alert>;
  if (!project.data || !role.data) return <Center h={200}><Loader aria-label="Loading the project" /></Center>;
  const roles = new Set(role.data.roles);
  const access: ProjectAccess = {
    projectId,
    project: project.data,
    can: (needed) => roles.has(needed),
    path: (sub) => `/p/${projectId}${sub ? `/${sub}` : ''}`,
  };
  return <ProjectContext.Provider value={access}><Outlet /></ProjectContext.Provider>;
}
