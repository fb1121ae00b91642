// A local S3-compatible server (s3rver, an npm devDependency, so always there) on 127.0.0.1 with a
// throwaway directory, for the blob-store contract and services running on S3.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** Settings that put a service's blobs on this server (credentials come from the AWS variables). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startLocalS3(bucket = 'atrium-test'): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'atrium-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${address.port}`;
  // The SDK's standard credential chain, as a deployment would set it.
  process.env.AWS_ACCESS_KEY_ID ??= S3_TEST_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= S3_TEST_CREDENTIALS.secretAccessKey;
  return {
    endpoint,
    bucket,
    env: { ATRIUM_S3_BUCKET: bucket, ATRIUM_S3_ENDPOINT: endpoint, ATRIUM_S3_REGION: 'us-east-1', ATRIUM_S3_FORCE_PATH_STYLE: 'true' },
    async stop() {
      const http = (server as unknown as { httpServer: Server }).httpServer;
      http.closeAllConnections();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
