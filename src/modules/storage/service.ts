// Project storage: files of a project in the blob store under `projects/<project_id>/`.
import type { Readable } from 'node:stream';
import type { AppContext } from '../../context.ts';
import { BlobTooLargeError } from '../../platform/blobs/store.ts';
import { notFound, tooLarge } from '../../platform/http/errors.ts';
import { normaliseStoragePath } from './paths.ts';

const blobKey = (projectId: string, path: string) => `projects/${projectId}/${path}`;

export async function uploadFile(ctx: AppContext, projectId: string, rawPath: string, body: Readable): Promise<{ path: string; size: number }> {
  const path = normaliseStoragePath(rawPath);
  try {
    const { size } = await ctx.blobs.put(blobKey(projectId, path), body, ctx.config.maxUploadBytes);
    return { path, size };
  } catch (error) {
    if (error instanceof BlobTooLargeError) throw tooLarge(error.message);
    throw error;
  }
}

export async function downloadFile(ctx: AppContext, projectId: string, rawPath: string) {
  const path = normaliseStoragePath(rawPath);
  const blob = await ctx.blobs.get(blobKey(projectId, path));
  if (!blob) throw notFound('File');
  return blob;
}
