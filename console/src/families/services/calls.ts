// The services routes of a scope: the project's, or one room's own.
import { api, unwrap, type ResponseOf } from '../../api.ts';
import type { SpecBody } from './spec.ts';

export type Service = ResponseOf<'/accounts/projects/{project_id}/services/{service_id}', 'get'>;

export function servicesOf(projectId: string, roomName: string | undefined) {
  const project = { project_id: projectId };
  // The routes' bodies are typed as open objects (a spec or a template payload), checked by the API.
  const body = (spec: SpecBody) => spec as never;
  return {
    list: async (query: { offset: number; count: number; filter?: string }) => roomName === undefined
      ? unwrap(api.GET('/accounts/projects/{project_id}/services', { params: { path: project, query } }))
      : unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}/services', { params: { path: { ...project, room_name: roomName }, query } })),
    get: async (serviceId: string): Promise<Service> => roomName === undefined
      ? unwrap(api.GET('/accounts/projects/{project_id}/services/{service_id}', { params: { path: { ...project, service_id: serviceId } } }))
      : unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}/services/{service_id}', { params: { path: { ...project, room_name: roomName, service_id: serviceId } } })),
    create: async (spec: SpecBody): Promise<Service> => roomName === undefined
      ? unwrap(api.POST('/accounts/projects/{project_id}/services', { params: { path: project }, body: body(spec) }))
      : unwrap(api.POST('/accounts/projects/{project_id}/rooms/{room_name}/services', { params: { path: { ...project, room_name: roomName } }, body: body(spec) })),
    replace: async (serviceId: string, spec: SpecBody): Promise<Service> => roomName === undefined
      ? unwrap(api.PUT('/accounts/projects/{project_id}/services/{service_id}', { params: { path: { ...project, service_id: serviceId } }, body: body(spec) }))
      : unwrap(api.PUT('/accounts/projects/{project_id}/rooms/{room_name}/services/{service_id}', { params: { path: { ...project, room_name: roomName, service_id: serviceId } }, body: body(spec) })),
    remove: async (serviceId: string) => roomName === undefined
      ? unwrap(api.DELETE('/accounts/projects/{project_id}/services/{service_id}', { params: { path: { ...project, service_id: serviceId } } }))
      : unwrap(api.DELETE('/accounts/projects/{project_id}/rooms/{room_name}/services/{service_id}', { params: { path: { ...project, room_name: roomName, service_id: serviceId } } })),
  };
}
