// Static assets of the sign-in pages and the routes that serve them: the service serves its own
// stylesheet, logo and passkey scripts (no external fonts, scripts or images), so the pages work
// offline and the CSP can stay strict.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type } from 'typebox';
import type { Api } from '../../../module.ts';
import { ASSETS } from '../pages.ts';
import { PAGE_ROUTE, SECURITY_HEADERS } from '../respond.ts';
import { PAGE } from './schemas.ts';

/** The default logo, shown when a client has no logo_url. */
const ATRIUM_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" role="img" aria-label="Atrium">
<rect width="64" height="64" rx="14" fill="#3b5bdb"/>
<path d="M32 12 50 52h-8.5l-3.6-8.4H26.1L22.5 52H14L32 12Zm0 14.2-3.4 10.1h6.8L32 26.2Z" fill="#fff"/>
</svg>
`;

/** The dark palette, used when the theme is dark and when it is auto in a dark browser. */
const DARK_PALETTE = `  color-scheme: dark;
  --bg: #0f1115;
  --card: #1a1d24;
  --fg: #eef0f4;
  --muted: #a9b0bd;
  --border: #3a404c;
  --accent: #748ffc;
  --accent-fg: #0f1115;
  --error: #ffb4ab;
  --error-bg: #3d1d1a;
  --notice-bg: #1d2a44;
  --focus: #a5b4fc;
`;

/**
 * Colours come from custom properties. `data-theme` on <html> is the client's theme: light and
 * dark are forced; auto follows the browser's prefers-color-scheme.
 */
const SIGNIN_CSS = `:root {
  color-scheme: light;
  --bg: #f4f5f7;
  --card: #ffffff;
  --fg: #16181d;
  --muted: #555c69;
  --border: #cfd4dc;
  --accent: #3b5bdb;
  --accent-fg: #ffffff;
  --error: #b42318;
  --error-bg: #fdecea;
  --notice-bg: #e8f0fe;
  --focus: #1c3fbf;
}
html[data-theme="dark"] {
${DARK_PALETTE}}
@media (prefers-color-scheme: dark) {
  html[data-theme="auto"] {
${DARK_PALETTE}  }
}
* { box-sizing: border-box; }
body {
  margin: 0;
  min-height: 100vh;
  display: flex;
  flex-direction: column;
  align-items: center;
  justify-content: center;
  gap: 1rem;
  padding: 1.5rem;
  background: var(--bg);
  color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
main {
  width: 100%;
  max-width: 26rem;
  background: var(--card);
  border: 1px solid var(--border);
  border-radius: 12px;
  padding: 2rem;
}
.brand { display: flex; align-items: center; gap: 0.75rem; margin-bottom: 1rem; }
.brand img { width: 48px; height: 48px; border-radius: 10px; object-fit: contain; }
.brand .app { font-weight: 600; font-size: 1.05rem; margin: 0; overflow-wrap: anywhere; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; line-height: 1.3; }
p { margin: 0 0 1rem; }
.muted, footer { color: var(--muted); font-size: 0.9rem; }
form { margin: 0 0 1rem; }
label { display: block; font-weight: 600; margin: 0 0 0.25rem; }
input[type="email"], input[type="password"], input[type="text"] {
  display: block;
  width: 100%;
  margin: 0 0 1rem;
  padding: 0.6rem 0.75rem;
  font: inherit;
  color: var(--fg);
  background: var(--bg);
  border: 1px solid var(--border);
  border-radius: 8px;
}
input.code { letter-spacing: 0.4em; font-size: 1.4rem; text-align: center; }
button, .button {
  display: block;
  width: 100%;
  padding: 0.65rem 1rem;
  font: inherit;
  font-weight: 600;
  text-align: center;
  text-decoration: none;
  color: var(--accent-fg);
  background: var(--accent);
  border: 1px solid var(--accent);
  border-radius: 8px;
  cursor: pointer;
}
button.secondary { color: var(--fg); background: transparent; border-color: var(--border); }
.actions { display: grid; gap: 0.5rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.error { color: var(--error); background: var(--error-bg); padding: 0.6rem 0.75rem; border-radius: 8px; }
.notice { background: var(--notice-bg); padding: 0.6rem 0.75rem; border-radius: 8px; }
ul.scopes { padding-left: 1.25rem; margin: 0 0 1rem; }
ul.scopes li { margin-bottom: 0.35rem; }
.links { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; font-size: 0.95rem; }
.divider { display: flex; align-items: center; gap: 0.75rem; color: var(--muted); font-size: 0.9rem; margin: 1rem 0; }
.divider::before, .divider::after { content: ""; flex: 1; border-top: 1px solid var(--border); }
.user-code { font: 600 1.8rem/1.2 ui-monospace, SFMono-Regular, Menlo, monospace; letter-spacing: 0.1em; text-align: center; }
table { width: 100%; border-collapse: collapse; font-size: 0.95rem; }
th, td { text-align: left; padding: 0.4rem; border-bottom: 1px solid var(--border); vertical-align: top; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
[hidden] { display: none !important; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

/** @simplewebauthn/browser's bundle, which defines `SimpleWebAuthnBrowser` (its package exports only its modules). */
const WEBAUTHN_JS = readFileSync(fileURLToPath(new URL('../dist/bundle/index.umd.min.js', import.meta.resolve('@simplewebauthn/browser'))), 'utf8');

/**
 * The passkey buttons (pages.ts passkeyForm): shown where the browser has WebAuthn; a click asks the
 * server for options (with the form's CSRF token), lets the authenticator answer, and posts the answer
 * with the form, so the server's answer is a page like any other form's.
 */
const PASSKEY_JS = `(() => {
  const webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;
  for (const form of document.querySelectorAll('form[data-options]')) {
    const error = form.querySelector('[data-passkey-error]');
    const fail = (message) => { error.textContent = message; error.hidden = false; };
    form.hidden = false;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      error.hidden = true;
      let options;
      try {
        const response = await fetch(form.dataset.options, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({ _csrf: form.elements._csrf.value }),
        });
        if (!response.ok) return fail('This page is out of date. Reload it and try again.');
        options = await response.json();
      } catch {
        return fail('The server could not be reached. Try again.');
      }
      try {
        form.elements.response.value = JSON.stringify(await webauthn.startAuthentication({ optionsJSON: options }));
      } catch (cause) {
        return fail(cause && cause.name === 'NotAllowedError' ? 'No passkey was used. Try again, or sign in another way.' : 'The passkey could not be used: ' + (cause && cause.message));
      }
      form.submit();
    });
  }
})();
`;

export function assetRoutes(route: Api): void {
  for (const [name, body] of [['webauthn.js', WEBAUTHN_JS], ['passkey.js', PASSKEY_JS]] as const) {
    route.get(`${ASSETS}/${name}`, {
      config: PAGE_ROUTE,
      schema: { ...PAGE, summary: 'Passkey script of the sign-in pages', response: { 200: Type.String() } },
    }, async (_request, reply) => reply.headers(SECURITY_HEADERS).type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(body));
  }

  route.get(`${ASSETS}/style.css`, {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign-in page stylesheet', response: { 200: Type.String() } },
  }, async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(SIGNIN_CSS));

  route.get(`${ASSETS}/logo.svg`, {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Default logo', response: { 200: Type.String() } },
  }, async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=3600').send(ATRIUM_LOGO_SVG));
}
