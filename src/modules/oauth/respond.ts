// How the authorization server's HTML is sent: security headers on everything it serves, each
// page's own Content-Security-Policy, and no caching (pages carry form tokens and account details).
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { Page } from './pages.ts';

/** Headers on everything the provider and the pages serve. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export function sendPage(reply: FastifyReply, page: Page): FastifyReply {
  reply.status(page.status).headers(SECURITY_HEADERS).header('cache-control', 'no-store').header('content-security-policy', page.csp).type('text/html; charset=utf-8');
  return reply.send(page.html);
}

/** JSON for the pages' own scripts, with the same headers and no caching. */
export function sendJson(reply: FastifyReply, body: unknown): FastifyReply {
  reply.status(200).headers(SECURITY_HEADERS).header('cache-control', 'no-store').type('application/json; charset=utf-8');
  return reply.send(body);
}

/** Route config of the pages: anyone may open them; the flow, not a credential, decides what they show. */
export const PAGE_ROUTE = { auth: { permission: 'public' as const } };

export const Html = Type.String({ description: 'HTML page' });
