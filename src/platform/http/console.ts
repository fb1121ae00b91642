// The web console: the static files Vite builds from console/ into console/dist, served at /console.
// Hashed assets are immutable and cached for a year, and sent as the brotli or gzip file the build
// wrote beside each (scripts/console-build.ts); index.html is never cached, so a new build is
// picked up on the next load, and every other path under /console gets it too (the console routes
// in the browser). The page learns the public URL from a meta tag, so it signs in through the OAuth
// issuer even when it was opened under another address.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

export const CONSOLE_PATH = '/console';

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Mantine sets CSS variables in a style element and style attributes.
  "style-src 'self' 'unsafe-inline'",
  // OAuth client logos live on the applications' own servers.
  "img-src 'self' data: blob: https: http:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Atrium console</title>
<p>The console is not built. Run <code>npm run console:build</code> (or <code>npm install</code>) and reload.</p>`;

function escapeAttribute(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

export async function serveConsole(app: FastifyInstance, options: { root: string; publicUrl: string }): Promise<void> {
  await app.register(fastifyStatic, {
    root: join(options.root, 'assets'),
    prefix: `${CONSOLE_PATH}/assets/`,
    immutable: true,
    maxAge: '365d',
    preCompressed: true,
    index: false,
  });

  let page: Promise<string | undefined> | undefined;
  const indexPage = () => {
    page ??= readFile(join(options.root, 'index.html'), 'utf8').then(
      (html) => html.replace('__ATRIUM_PUBLIC_URL__', escapeAttribute(options.publicUrl)),
      () => {
        page = undefined;
        return undefined;
      },
    );
    return page;
  };
  const sendIndex = async (_request: unknown, reply: FastifyReply) => {
    const html = await indexPage();
    return reply
      .status(html ? 200 : 503)
      .headers({ 'cache-control': 'no-cache', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' })
      .type('text/html; charset=utf-8')
      .send(html ?? NOT_BUILT);
  };
  app.get(CONSOLE_PATH, sendIndex);
  app.get(`${CONSOLE_PATH}/*`, sendIndex);
}
