// Renders docs/errors.md from the error catalogue (src/platform/http/errors.ts).
// `npm run docs:errors` rewrites the file; test/unit/errors.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import { ERROR_CATALOGUE, type ErrorCode } from '../src/platform/http/errors.ts';

export const ERRORS_DOC = new URL('../docs/errors.md', import.meta.url).pathname;

const cell = (text: string) => text.replaceAll('|', '\\|');

export function renderErrorsDoc(): string {
  const codes = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).sort((a, b) => ERROR_CATALOGUE[a].status - ERROR_CATALOGUE[b].status || a.localeCompare(b));
  return [
    '# Errors',
    '',
    '<!-- Generated from src/platform/http/errors.ts by `npm run docs:errors`; do not edit by hand. -->',
    '',
    'Every non-2xx answer of the REST API has the body',
    '',
    '```json',
    '{"error": {"code": "not_found", "message": "Room not found", "request_id": "5d0c6f0e-0e4a-4a37-9d8e-2f1c1b7f4f61"}}',
    '```',
    '',
    '`code` is one of the stable codes below (branch on it); `message` is for people and may change;',
    '`request_id` names the request, as its `X-Request-Id` response header and the server\'s log lines do',
    '(a client may send its own `X-Request-Id`, up to 128 letters, digits and `._:@/+=-`; any other is replaced).',
    'The same shape covers errors raised before a route is found (a badly percent-encoded URL, an',
    'over-long path parameter) and database refusals (a value PostgreSQL cannot store).',
    '',
    '| code | HTTP status | when |',
    '|---|---|---|',
    ...codes.map((c) => `| \`${c}\` | ${ERROR_CATALOGUE[c].status} | ${cell(ERROR_CATALOGUE[c].meaning)} |`),
    '',
    '## Other shapes',
    '',
    '- **OAuth protocol endpoints** (`/oauth/token`, `/oauth/device`, `/oauth/revoke`, `/oauth/introspect`,',
    '  `/oauth/authorize` when it cannot redirect back…) answer as RFC 6749 §5.2 defines:',
    '  `{"error": "invalid_grant", "error_description": "…"}`, with the protocol\'s error codes',
    '  (`invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`,',
    '  `invalid_scope`, `authorization_pending`, `slow_down`, `access_denied`, `expired_token`…). See',
    '  [oauth.md](oauth.md). A path or method under `/oauth` that the server does not serve answers',
    '  `not_found` in the shape above, and a failure of the OAuth server itself answers `internal`.',
    '- **Sign-in and consent pages** answer with an HTML page that explains the problem, with the same',
    '  status codes (400 for an expired flow, 403 for a refused form, 429 with `Retry-After` when too many',
    '  attempts were made).',
    '',
  ].join('\n');
}

if (import.meta.main) {
  writeFileSync(ERRORS_DOC, renderErrorsDoc());
  process.stdout.write(`wrote ${ERRORS_DOC}\n`);
}
