// Uploads with progress: fetch cannot report how much of a request body was sent, so this one
// request goes through XMLHttpRequest, to the same route the generated client knows.
import { ApiError } from '../../api.ts';
import type { paths } from '../../../../src/api-client/client.ts';
import { accessToken } from '../../auth/session.ts';
import { PUBLIC_URL } from '../../config.ts';

const UPLOAD_ROUTE = '/projects/{project_id}/storage/upload' satisfies keyof paths;

export async function uploadFile(projectId: string, path: string, file: File, onProgress: (fraction: number) => void): Promise<void> {
  const token = await accessToken();
  const url = `${PUBLIC_URL}${UPLOAD_ROUTE.replace('{project_id}', encodeURIComponent(projectId))}?${new URLSearchParams({ path })}`;
  await new Promise<void>((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    request.setRequestHeader('authorization', `Bearer ${token}`);
    request.setRequestHeader('content-type', 'application/octet-stream');
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      if (request.status < 300) return resolve();
      let body: unknown;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        body = undefined;
      }
      reject(new ApiError(request.status, body));
    };
    request.onerror = () => reject(new Error('The upload was interrupted'));
    request.send(file);
  });
}
