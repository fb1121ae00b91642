// Project storage: files of a project in the blob store under `projects/<project_id>/`.
//
// Writes and deletes emit storage.file.updated / storage.file.deleted. The bytes live in the blob
// store, not in the database, so they cannot share the event's transaction. The order is chosen so
// that an event never announces a change that did not happen: the blob is written first (to a
// temporary file, then atomically renamed into place) or deleted, and only then do the event, its
// deliveries and their outbox jobs commit, in one transaction. The caller hears success only after
// that commit; if the process dies in between, the request fails, the file may have changed
// without an event, and the caller's retry of the write (or delete) emits it.
//
// Rooms keep their files here too, under `rooms/<room name>/` (`roomStoragePath`); reading them needs
// the room's access (`roomOfPath`).
import type { Readable } from 'node:stream';
import parseRange from 'range-parser';
import type { AppContext } from '../../context.ts';
import { BlobConflictError, BlobTooLargeError, type RangeChooser } from '../../platform/blobs/store.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { ApiError, apiError, badRequest, conflict, notFound, tooLarge } from '../../platform/http/errors.ts';
import { fileDeleted, fileUpdated } from './events.ts';
import { normaliseStoragePath } from './paths.ts';

const projectRoot = (projectId: string) => `projects/${projectId}`;
/** The folder of project storage that holds the rooms' storage, one folder per room name. */
const ROOMS_FOLDER = 'rooms';
const blobKey = (projectId: string, path: string) => `${projectRoot(projectId)}/${path}`;

/** Most entries a listing returns. */
export const MAX_LISTING = 10_000;

/** Who changed a file, as events name them: the user, or the API key when no user acts. */
export function participantIdOf(principal: Principal): string {
  return principal.userId ?? principal.credentialId;
}

/**
 * The upload is refused while the client may still be sending: the answer waits for the rest of
 * the body (read and discarded, up to a bound: src/platform/http/body-drain.ts), so that the
 * client reads the 413, and the connection closes unless it all arrived.
 */
export function uploadTooLarge(maxBytes: number): ApiError {
  return tooLarge(`Upload exceeds the ${maxBytes}-byte limit (ATRIUM_MAX_UPLOAD_BYTES)`, { connection: 'close' });
}

/**
 * Writes a file and emits storage.file.updated. `participantId` names the writer: a user or API key
 * id for requests.
 */
export async function uploadFile(ctx: AppContext, projectId: string, rawPath: string, body: Readable, participantId: string): Promise<{ path: string; size: number }> {
  const written = await writeFile(ctx, projectId, rawPath, body);
  // One statement (event, deliveries, jobs): atomic without a transaction's extra round trips.
  await announceFileUpdated(ctx, ctx.db, projectId, written.path, participantId);
  return written;
}

/**
 * Writes a file without announcing it, for a service feature that announces it in a transaction of
 * its own (`announceFileUpdated`) once the write is acknowledged there.
 */
export async function writeFile(ctx: AppContext, projectId: string, rawPath: string, body: Readable): Promise<{ path: string; size: number }> {
  const path = normaliseStoragePath(rawPath);
  try {
    const { size } = await ctx.blobs.put(blobKey(projectId, path), body, ctx.config.maxUploadBytes);
    return { path, size };
  } catch (error) {
    if (error instanceof BlobTooLargeError) throw uploadTooLarge(ctx.config.maxUploadBytes);
    if (error instanceof BlobConflictError) throw conflict(`${path} clashes with an existing file or folder`);
    throw error;
  }
}

/**
 * Emits storage.file.updated for a file written with `writeFile`, in the caller's transaction.
 * `participantId` names the service feature that wrote it (e.g. `feed_subscription:<id>`).
 */
export async function announceFileUpdated(ctx: AppContext, tx: Db, projectId: string, path: string, participantId: string): Promise<void> {
  await ctx.events.emit(tx, projectId, fileUpdated, { path, participant_id: participantId });
}

/**
 * The project storage path of a file in a room's storage: rooms keep their files in their
 * project's storage under `rooms/<room name>/`, where room servers and the storage API read them.
 */
export function roomStoragePath(roomName: string, path: string): string {
  // The room's folder is one segment, and it must stay the room's own.
  if (roomName === '.' || roomName === '..' || /[/\\]/.test(roomName)) throw badRequest(`The room name ${JSON.stringify(roomName)} cannot name a storage folder`, 'invalid_path');
  return normaliseStoragePath([ROOMS_FOLDER, roomName, path].filter(Boolean).join('/'));
}

/**
 * The room whose storage a path is in (`rooms/<room name>/…`), or undefined for a path outside every
 * room's: reading there needs the room's access (the room type's `read_files`).
 */
export function roomOfPath(raw: string): string | undefined {
  const [top, room] = normaliseStoragePath(raw, { allowRoot: true }).split('/');
  return top === ROOMS_FOLDER && room !== undefined ? room : undefined;
}

/**
 * Whether `raw` stays inside a storage folder it is taken relative to (a leading `/` counts as
 * that folder): the reason when it does not (a `..` segment, control characters, too long).
 */
export function storageSubpathProblem(raw: string): string | undefined {
  try {
    normaliseStoragePath(raw.replace(/^[/\\]+/, ''), { allowRoot: true });
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
}

/**
 * The bytes a `Range` header asks for, once the file's size is known: one range, or undefined for
 * the whole file (no header, a malformed one, another unit, or several ranges, which RFC 9110 lets
 * a server answer in full); a 416 when it names no byte of the file.
 */
function rangeChooser(header: string | undefined): RangeChooser | undefined {
  if (header === undefined || !header.startsWith('bytes=')) return undefined;
  return (size) => {
    const ranges = parseRange(size, header);
    if (ranges === -2) return undefined;
    if (ranges === -1) {
      // range-parser refuses a suffix longer than the file; RFC 9110 §14.1.2 makes it the whole file.
      if (size > 0 && /^bytes=\s*-0*[1-9]\d*\s*$/.test(header)) return { start: 0, end: size - 1 };
      throw apiError('range_not_satisfiable', { size }, { 'content-range': `bytes */${size}` });
    }
    return ranges.length === 1 ? ranges[0] : undefined;
  };
}

/** A file, or the one range of it that `rangeHeader` asks for (`range` is set then). */
export async function downloadFile(ctx: AppContext, projectId: string, rawPath: string, rangeHeader?: string) {
  const path = normaliseStoragePath(rawPath);
  const blob = await ctx.blobs.get(blobKey(projectId, path), rangeChooser(rangeHeader));
  if (!blob) throw notFound('File');
  return blob;
}

/** Deletes a file and emits storage.file.deleted; 404 when there is no such file. */
export async function deleteFile(ctx: AppContext, projectId: string, rawPath: string, participantId: string): Promise<{ path: string }> {
  const path = normaliseStoragePath(rawPath);
  if (!(await ctx.blobs.delete(blobKey(projectId, path)))) throw notFound('File');
  // One statement (event, deliveries, jobs): atomic without a transaction's extra round trips.
  await ctx.events.emit(ctx.db, projectId, fileDeleted, { path, participant_id: participantId });
  return { path };
}

export interface StorageEntry {
  name: string;
  path: string;
  is_folder: boolean;
  size: number | null;
  updated_at: string | null;
}

/** The files and folders directly inside a folder (the root when `rawFolder` is empty). */
export async function listFolder(ctx: AppContext, projectId: string, rawFolder: string): Promise<{ path: string; files: StorageEntry[]; truncated: boolean }> {
  const folder = normaliseStoragePath(rawFolder, { allowRoot: true });
  const blobs = await ctx.blobs.list(folder ? blobKey(projectId, folder) : projectRoot(projectId));
  const entries = new Map<string, StorageEntry>();
  for (const blob of blobs) {
    const [first, ...rest] = blob.path.split('/');
    const path = folder ? `${folder}/${first}` : first!;
    if (rest.length > 0) {
      if (!entries.has(path)) entries.set(path, { name: first!, path, is_folder: true, size: null, updated_at: null });
    } else {
      entries.set(path, { name: first!, path, is_folder: false, size: blob.size, updated_at: blob.updatedAt.toISOString() });
    }
  }
  const files = [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { path: folder, files: files.slice(0, MAX_LISTING), truncated: files.length > MAX_LISTING };
}
