// Reading back what landed in project storage, through the API as its owner would.
import { call, type Tenant, type TestService } from './service.ts';

/** Every line of every file under a folder of project storage, by file (paths sorted). */
export async function filesUnder(service: TestService, tenant: Tenant, folder: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const walk = async (path: string) => {
    const listing = await call(service, 'GET', `/projects/${tenant.projectId}/storage?path=${encodeURIComponent(path)}`, { token: tenant.apiKey });
    for (const entry of listing.body.files ?? []) {
      if (entry.is_folder) await walk(entry.path);
      else {
        const file = await call(service, 'GET', `/projects/${tenant.projectId}/storage/download?path=${encodeURIComponent(entry.path)}`, { token: tenant.apiKey });
        out.set(entry.path, String(file.body).split('\n').filter(Boolean));
      }
    }
  };
  await walk(folder);
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

export const allLines = (files: Map<string, string[]>) => [...files.values()].flat();
