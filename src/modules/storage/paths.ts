// Normalisation of project storage paths: relative, forward slashes, no `.`/`..` segments, no
// control characters, so a path can never escape its project's folder.
import { badRequest } from '../../platform/http/errors.ts';

export const MAX_PATH_LENGTH = 1024;
export const MAX_SEGMENT_BYTES = 255;

export function normaliseStoragePath(raw: string, { allowRoot = false } = {}): string {
  if (raw.length > MAX_PATH_LENGTH) throw badRequest(`path is longer than ${MAX_PATH_LENGTH} characters`, 'invalid_path');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw badRequest('path contains control characters', 'invalid_path');
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[A-Za-z]:/.test(raw)) throw badRequest('path must be relative', 'invalid_path');
  const segments = raw.replaceAll('\\', '/').split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw badRequest('path may not contain ".."', 'invalid_path');
  if (segments.length === 0 && !allowRoot) throw badRequest('path names no file', 'invalid_path');
  // File systems refuse longer names (NAME_MAX); refusing here keeps that a 400, not a 500.
  if (segments.some((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES)) throw badRequest(`each path segment may have at most ${MAX_SEGMENT_BYTES} bytes`, 'invalid_path');
  return segments.join('/');
}
