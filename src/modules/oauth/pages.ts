// Server-rendered sign-in, consent, device and mail pages. Plain HTML and one stylesheet, every value
// escaped, every input labelled, errors announced (role="alert"). Only pages that offer a passkey load
// scripts (our own, from this origin): WebAuthn has no form-only way in.
import { PASSWORD_MIN_LENGTH } from '../users/service.ts';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH } from './accounts.ts';
import type { Branding, Theme } from './clients.ts';

export const ASSETS = '/signin/assets';
export const DEFAULT_LOGO = `${ASSETS}/logo.svg`;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export interface Page {
  status: number;
  html: string;
  /** Content-Security-Policy for this page (the client's logo origin is allowed as an image source). */
  csp: string;
}

export interface Upstream {
  id: string;
  label: string;
}

function cspFor(logoUrl: string | undefined, scripts: boolean): string {
  const logoOrigin = logoUrl ? URL.parse(logoUrl)?.origin : undefined;
  const img = ["'self'", 'data:', ...(logoOrigin && logoOrigin !== 'null' ? [logoOrigin] : [])].join(' ');
  // No form-action: after a consent POST the browser follows redirects to the client's own
  // redirect_uri, which form-action would block in Chromium.
  return `default-src 'none'; style-src 'self'; img-src ${img};${scripts ? " script-src 'self'; connect-src 'self';" : ''} frame-ancestors 'none'; base-uri 'none'`;
}

/** The page frame: the client's logo, name and theme, or Atrium's. */
export function page(options: { title: string; branding?: Branding | undefined; content: string; status?: number; scripts?: boolean }): Page {
  const { branding } = options;
  const theme: Theme = branding?.theme ?? 'auto';
  const logo = branding?.logoUrl ?? DEFAULT_LOGO;
  const appName = branding?.name ?? 'Atrium';
  const logoAlt = branding?.logoUrl ? `${appName} logo` : 'Atrium logo';
  const html = `<!doctype html>
<html lang="en" data-theme="${theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(options.title)} · ${escapeHtml(appName)}</title>
<link rel="stylesheet" href="${ASSETS}/style.css">
${options.scripts ? `<script src="${ASSETS}/webauthn.js" defer></script>\n<script src="${ASSETS}/passkey.js" defer></script>\n` : ''}</head>
<body>
<main aria-labelledby="page-title">
<div class="brand"><img id="client-logo" src="${escapeHtml(logo)}" alt="${escapeHtml(logoAlt)}" width="48" height="48"><p class="app" id="client-name">${escapeHtml(appName)}</p></div>
<h1 id="page-title">${escapeHtml(options.title)}</h1>
${options.content}
</main>
<footer>Sign-in secured by Atrium</footer>
</body>
</html>
`;
  return { status: options.status ?? 200, html, csp: cspFor(branding?.logoUrl, options.scripts ?? false) };
}

const alert = (message: string | undefined) => (message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');
const notice = (message: string | undefined) => (message ? `<p class="notice" role="status">${escapeHtml(message)}</p>` : '');
const csrfField = (token: string) => `<input type="hidden" name="_csrf" value="${escapeHtml(token)}">`;

function input(name: string, label: string, options: { type?: string; value?: string | undefined; autocomplete?: string; required?: boolean; extra?: string } = {}): string {
  const id = `f-${name}`;
  return `<label for="${id}">${escapeHtml(label)}</label>
<input id="${id}" name="${name}" type="${options.type ?? 'text'}"${options.value ? ` value="${escapeHtml(options.value)}"` : ''}${options.autocomplete ? ` autocomplete="${options.autocomplete}"` : ''}${options.required === false ? '' : ' required'}${options.extra ? ` ${options.extra}` : ''}>`;
}

export interface FlowPage {
  uid: string;
  branding: Branding | undefined;
  csrf: string;
}

// The forms state the server's own bounds, so the browser catches a bad value before sending it.
const EMAIL_BOUNDS = `maxlength="${EMAIL_MAX_LENGTH}"`;
const PASSWORD_BOUNDS = `maxlength="${PASSWORD_MAX_LENGTH}"`;
const NEW_PASSWORD_BOUNDS = `minlength="${PASSWORD_MIN_LENGTH}" ${PASSWORD_BOUNDS}`;

const flowPath = (uid: string, rest = '') => `/interaction/${encodeURIComponent(uid)}${rest}`;

/**
 * A passkey button: shown by passkey.js where the browser has WebAuthn; it fetches options from
 * `options`, lets the authenticator answer, and posts the answer to `action` with the form's token.
 */
function passkeyForm(p: FlowPage, action: string, options: string, label: string): string {
  return `<form method="post" action="${flowPath(p.uid, action)}" data-options="${flowPath(p.uid, options)}" class="passkey" id="passkey-form" hidden>
${csrfField(p.csrf)}
<input type="hidden" name="response" value="">
<button type="submit" class="secondary">${escapeHtml(label)}</button>
<p class="error" role="alert" data-passkey-error hidden></p>
</form>`;
}

export function loginPage(p: FlowPage & { passwordLogin: boolean; emailLogin: boolean; upstream: Upstream[]; email?: string | undefined; error?: string | undefined; notice?: string | undefined; status?: number }): Page {
  const parts: string[] = [alert(p.error), notice(p.notice)];
  if (p.passwordLogin) {
    parts.push(`<form method="post" action="${flowPath(p.uid, '/password')}" id="password-form">
${csrfField(p.csrf)}
${input('email', 'Email', { type: 'email', value: p.email, autocomplete: 'username', extra: `${EMAIL_BOUNDS} autofocus` })}
${input('password', 'Password', { type: 'password', autocomplete: 'current-password', extra: PASSWORD_BOUNDS })}
<button type="submit">Sign in</button>
</form>`);
  }
  if (p.emailLogin) {
    parts.push(`<div class="links">
<a href="${flowPath(p.uid, '/code')}">Email me a sign-in code</a>
<a href="${flowPath(p.uid, '/forgot')}">Forgot password?</a>
<a href="${flowPath(p.uid, '/signup')}">Create an account</a>
</div>`);
  }
  if (p.upstream.length > 0) {
    if (p.passwordLogin) parts.push('<p class="divider">or</p>');
    parts.push(`<div class="actions">${p.upstream.map((u) => `<form method="post" action="${flowPath(p.uid, `/upstream/${encodeURIComponent(u.id)}`)}">${csrfField(p.csrf)}<button type="submit" class="secondary">Continue with ${escapeHtml(u.label)}</button></form>`).join('\n')}</div>`);
  }
  if (!p.passwordLogin && p.upstream.length === 0) {
    parts.push('<p>No sign-in method is enabled on this server. The operator can enable password sign-in (ATRIUM_PASSWORD_LOGIN) or add identity providers (ATRIUM_OIDC_PROVIDERS).</p>');
  }
  // Passwordless: a passkey names its account itself, so nothing is typed first.
  parts.push(passkeyForm(p, '/passkey', '/passkey/options', 'Continue with a passkey'));
  return page({ title: `Sign in to ${p.branding?.name ?? 'Atrium'}`, branding: p.branding, content: parts.join('\n'), status: p.status ?? 200, scripts: true });
}

export interface FactorChoices {
  totp: boolean;
  passkeys: boolean;
  recoveryCodes: boolean;
}

/** The second step of a sign-in: the authenticator app's code, a passkey, or a recovery code. */
export function secondFactorPage(p: FlowPage & FactorChoices & { email: string; error?: string | undefined; status?: number }): Page {
  const parts = [alert(p.error), `<p>Signed in as <strong>${escapeHtml(p.email)}</strong>. Confirm it is you with your second factor.</p>`];
  if (p.totp) {
    parts.push(`<form method="post" action="${flowPath(p.uid, '/factor/totp')}" id="totp-form">
${csrfField(p.csrf)}
${input('code', 'Code from your authenticator app', { autocomplete: 'one-time-code', extra: 'inputmode="numeric" pattern="[0-9 ]{6,7}" maxlength="7" class="code" autofocus' })}
<button type="submit">Verify</button>
</form>`);
  }
  if (p.passkeys) parts.push(passkeyForm(p, '/factor/passkey', '/factor/passkey/options', 'Use a passkey'));
  const links = [
    ...(p.recoveryCodes ? [`<a href="${flowPath(p.uid, '/factor/recovery')}">Use a recovery code</a>`] : []),
    `<a href="${flowPath(p.uid)}">Sign in as someone else</a>`,
  ];
  parts.push(`<p class="links">${links.join('')}</p>`);
  return page({ title: 'Confirm it is you', branding: p.branding, status: p.status ?? 200, content: parts.join('\n'), scripts: p.passkeys });
}

export function recoveryCodePage(p: FlowPage & { error?: string | undefined; status?: number }): Page {
  return page({
    title: 'Use a recovery code',
    branding: p.branding,
    status: p.status ?? 200,
    content: `${alert(p.error)}<p>Enter one of the recovery codes you saved when you added your second factor. Each code works once.</p>
<form method="post" action="${flowPath(p.uid, '/factor/recovery')}" id="recovery-form">
${csrfField(p.csrf)}
${input('code', 'Recovery code', { autocomplete: 'off', extra: 'maxlength="20" spellcheck="false" autocapitalize="none" class="code" autofocus' })}
<button type="submit">Sign in</button>
</form>
<p class="links"><a href="${flowPath(p.uid, '/factor')}">Use your authenticator app or a passkey</a></p>`,
  });
}

/** The client asked for two factors and the account has one only: where to add one, or go back. */
export function secondFactorMissingPage(p: FlowPage & { accountUrl: string }): Page {
  const name = p.branding?.name ?? 'This application';
  return page({
    title: 'A second factor is needed',
    branding: p.branding,
    status: 403,
    content: `<p><strong>${escapeHtml(name)}</strong> asks for a sign-in with two factors, and your account has no second factor yet. Add an authenticator app or a passkey on your Atrium account page, then sign in again.</p>
<p class="links"><a href="${escapeHtml(p.accountUrl)}">Open your account page</a></p>
<form method="post" action="${flowPath(p.uid, '/factor/abort')}">
${csrfField(p.csrf)}
<button type="submit" class="secondary">Return to ${escapeHtml(name)}</button>
</form>`,
  });
}

export function codeRequestPage(p: FlowPage & { email?: string | undefined; error?: string | undefined; status?: number }): Page {
  return page({
    title: 'Sign in with a code',
    branding: p.branding,
    status: p.status ?? 200,
    content: `${alert(p.error)}<p>We will email you a six-digit code that signs you in.</p>
<form method="post" action="${flowPath(p.uid, '/code')}">
${csrfField(p.csrf)}
${input('email', 'Email', { type: 'email', value: p.email, autocomplete: 'username', extra: `${EMAIL_BOUNDS} autofocus` })}
<button type="submit">Send code</button>
</form>
<p class="links"><a href="${flowPath(p.uid)}">Back to sign in</a></p>`,
  });
}

export function codeEntryPage(p: FlowPage & { email: string; error?: string | undefined; status?: number }): Page {
  return page({
    title: 'Enter your code',
    branding: p.branding,
    status: p.status ?? 200,
    content: `${alert(p.error)}<p>If an account exists for <strong>${escapeHtml(p.email)}</strong>, we have sent it a six-digit code. It is valid for 10 minutes.</p>
<form method="post" action="${flowPath(p.uid, '/code/verify')}">
${csrfField(p.csrf)}
<input type="hidden" name="email" value="${escapeHtml(p.email)}">
${input('code', 'Code', { autocomplete: 'one-time-code', extra: 'inputmode="numeric" pattern="[0-9]{6}" maxlength="6" class="code" autofocus' })}
<button type="submit">Sign in</button>
</form>
<p class="links"><a href="${flowPath(p.uid, '/code')}">Send a new code</a><a href="${flowPath(p.uid)}">Back to sign in</a></p>`,
  });
}

export function signupPage(p: FlowPage & { email?: string | undefined; firstName?: string | undefined; lastName?: string | undefined; error?: string | undefined; status?: number }): Page {
  return page({
    title: 'Create your account',
    branding: p.branding,
    status: p.status ?? 200,
    content: `${alert(p.error)}<form method="post" action="${flowPath(p.uid, '/signup')}">
${csrfField(p.csrf)}
${input('email', 'Email', { type: 'email', value: p.email, autocomplete: 'email', extra: `${EMAIL_BOUNDS} autofocus` })}
${input('first_name', 'First name (optional)', { value: p.firstName, autocomplete: 'given-name', required: false, extra: 'maxlength="200"' })}
${input('last_name', 'Last name (optional)', { value: p.lastName, autocomplete: 'family-name', required: false, extra: 'maxlength="200"' })}
${input('password', `Password (at least ${PASSWORD_MIN_LENGTH} characters)`, { type: 'password', autocomplete: 'new-password', extra: NEW_PASSWORD_BOUNDS })}
<button type="submit">Create account</button>
</form>
<p class="links"><a href="${flowPath(p.uid)}">I already have an account</a></p>`,
  });
}

export function forgotPage(p: FlowPage & { email?: string | undefined; error?: string | undefined; status?: number }): Page {
  return page({
    title: 'Reset your password',
    branding: p.branding,
    status: p.status ?? 200,
    content: `${alert(p.error)}<p>Enter your email address and we will send you a link to choose a new password.</p>
<form method="post" action="${flowPath(p.uid, '/forgot')}">
${csrfField(p.csrf)}
${input('email', 'Email', { type: 'email', value: p.email, autocomplete: 'username', extra: `${EMAIL_BOUNDS} autofocus` })}
<button type="submit">Send reset link</button>
</form>
<p class="links"><a href="${flowPath(p.uid)}">Back to sign in</a></p>`,
  });
}

export function resetPage(p: FlowPage & { token: string; email: string; error?: string | undefined; status?: number }): Page {
  return page({
    title: 'Choose a new password',
    branding: p.branding,
    status: p.status ?? 200,
    content: `${alert(p.error)}<p>For <strong>${escapeHtml(p.email)}</strong>. Changing your password signs you out everywhere.</p>
<form method="post" action="${flowPath(p.uid, '/reset')}">
${csrfField(p.csrf)}
<input type="hidden" name="token" value="${escapeHtml(p.token)}">
<input type="text" name="username" value="${escapeHtml(p.email)}" autocomplete="username" class="visually-hidden" tabindex="-1" aria-hidden="true" readonly>
${input('password', `New password (at least ${PASSWORD_MIN_LENGTH} characters)`, { type: 'password', autocomplete: 'new-password', extra: `${NEW_PASSWORD_BOUNDS} autofocus` })}
<button type="submit">Change password</button>
</form>`,
  });
}

export function confirmPage(p: FlowPage & { token: string; email: string }): Page {
  return page({
    title: 'Confirm your email address',
    branding: p.branding,
    content: `<p>Confirm <strong>${escapeHtml(p.email)}</strong> to finish creating your account. If you did not sign up, close this page: nothing happens without your confirmation.</p>
<form method="post" action="${flowPath(p.uid, '/confirm')}">
${csrfField(p.csrf)}
<input type="hidden" name="token" value="${escapeHtml(p.token)}">
<button type="submit">Confirm my email</button>
</form>`,
  });
}

export function unconfirmedPage(p: FlowPage & { email: string; sent?: boolean; canResend: boolean }): Page {
  // Without email sign-in nothing sends the link: the operator confirms the account.
  const next = p.canResend
    ? `<p>Your account <strong>${escapeHtml(p.email)}</strong> is not confirmed yet. Open the link in the confirmation email we sent you, then sign in.</p>
<form method="post" action="${flowPath(p.uid, '/confirm/resend')}">
${csrfField(p.csrf)}
<input type="hidden" name="email" value="${escapeHtml(p.email)}">
<button type="submit" class="secondary">Send the confirmation email again</button>
</form>`
    : `<p>Your account <strong>${escapeHtml(p.email)}</strong> is not confirmed yet, and this server sends no mail. Ask its operator to confirm it.</p>`;
  return page({
    title: 'Confirm your email first',
    branding: p.branding,
    status: 403,
    content: `${p.sent ? notice('We sent you a new confirmation link.') : ''}${next}
<p class="links"><a href="${flowPath(p.uid)}">Back to sign in</a></p>`,
  });
}

export function consentPage(p: FlowPage & { userEmail: string; scopes: string[] }): Page {
  const name = p.branding?.name ?? 'This application';
  const list = p.scopes.length > 0
    ? `<ul class="scopes" id="scopes">${p.scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>`
    : '<p>It asks for no access beyond knowing that you signed in.</p>';
  return page({
    title: `Allow ${name} to access your account?`,
    branding: p.branding,
    content: `<p>You are signed in as <strong>${escapeHtml(p.userEmail)}</strong>. <strong>${escapeHtml(name)}</strong> would like to:</p>
${list}
<form method="post" action="${flowPath(p.uid, '/consent')}" class="actions">
${csrfField(p.csrf)}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p class="muted">Allow only applications you trust. ${escapeHtml(name)} never sees your Atrium password.</p>`,
  });
}

/** A page with a heading, a message and optionally a link back into the flow. */
export function messagePage(p: { title: string; message: string; branding?: Branding | undefined; status?: number; link?: { href: string; text: string } | undefined; role?: 'alert' | 'status' }): Page {
  const body = p.role === 'alert' ? alert(p.message) : p.role === 'status' ? notice(p.message) : `<p>${escapeHtml(p.message)}</p>`;
  return page({
    title: p.title,
    branding: p.branding,
    status: p.status ?? 200,
    content: `${body}${p.link ? `<p class="links"><a href="${escapeHtml(p.link.href)}">${escapeHtml(p.link.text)}</a></p>` : ''}`,
  });
}

export function errorPage(p: { title?: string; message: string; status: number; branding?: Branding | undefined; detail?: string | undefined }): Page {
  return page({
    title: p.title ?? 'Something went wrong',
    branding: p.branding,
    status: p.status,
    content: `${alert(p.message)}${p.detail ? `<p class="muted" id="error-detail">${escapeHtml(p.detail)}</p>` : ''}`,
  });
}

// --- device flow (forms built by oidc-provider carry its own CSRF field) ------------------------

/** Action and CSRF value out of a form oidc-provider generated. */
export function providerForm(form: string): { action: string; xsrf: string } {
  const action = /action="([^"]*)"/.exec(form)?.[1] ?? '';
  const xsrf = /name="xsrf" value="([^"]*)"/.exec(form)?.[1] ?? '';
  return { action, xsrf };
}

export function deviceInputPage(form: string, error: string | undefined, code: string | undefined): Page {
  const { action, xsrf } = providerForm(form);
  return page({
    title: 'Connect a device',
    status: error ? 400 : 200,
    content: `${alert(error)}<p>Enter the code shown on your device or terminal.</p>
<form method="post" action="${escapeHtml(action)}" id="device-form">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}">
${input('user_code', 'Code', { value: code, autocomplete: 'off', extra: 'autocapitalize="characters" spellcheck="false" maxlength="20" autofocus' })}
<button type="submit">Continue</button>
</form>`,
  });
}

export function deviceConfirmPage(form: string, branding: Branding | undefined, userCode: string): Page {
  const { action, xsrf } = providerForm(form);
  const name = branding?.name ?? 'An application';
  return page({
    title: 'Confirm the device',
    branding,
    content: `<p><strong>${escapeHtml(name)}</strong> on a device asks to sign in as you. Continue only if your device shows this code:</p>
<p class="user-code" id="user-code">${escapeHtml(userCode)}</p>
<form method="post" action="${escapeHtml(action)}" class="actions">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}">
<input type="hidden" name="user_code" value="${escapeHtml(userCode)}">
<input type="hidden" name="confirm" value="yes">
<button type="submit">Continue</button>
<button type="submit" name="abort" value="yes" class="secondary">Cancel</button>
</form>`,
  });
}

export function deviceSuccessPage(branding: Branding | undefined): Page {
  return messagePage({ title: 'Device connected', branding, message: `${branding?.name ?? 'Your device'} is signed in. You can close this window and return to your device.`, role: 'status' });
}

export function logoutPage(form: string): Page {
  const { action, xsrf } = providerForm(form);
  return page({
    title: 'Sign out?',
    content: `<p>Do you want to sign out of Atrium on this browser?</p>
<form method="post" action="${escapeHtml(action)}" class="actions">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}">
<button type="submit" name="logout" value="yes">Sign out</button>
<button type="submit" class="secondary">Stay signed in</button>
</form>`,
  });
}

// --- project invitations (the link of the invitation mail) ----------------------------------------

export const INVITATION_PATH = '/signin/invitation';

export interface Invitation {
  token: string;
  projectName: string;
  email: string;
  /** The address has an account: joining needs no password. */
  accountExists: boolean;
}

/** The invitee's page: which project, as whom, and the form that joins (creating the account). */
export function invitationPage(p: Invitation & { error?: string | undefined; status?: number; firstName?: string | undefined; lastName?: string | undefined }): Page {
  const fields = p.accountExists
    ? '<p>This address already has an account: joining adds it to the project.</p>'
    : `<input type="text" name="username" value="${escapeHtml(p.email)}" autocomplete="username" class="visually-hidden" tabindex="-1" aria-hidden="true" readonly>
${input('first_name', 'First name (optional)', { value: p.firstName, autocomplete: 'given-name', required: false, extra: 'maxlength="200"' })}
${input('last_name', 'Last name (optional)', { value: p.lastName, autocomplete: 'family-name', required: false, extra: 'maxlength="200"' })}
${input('password', `Choose a password (at least ${PASSWORD_MIN_LENGTH} characters)`, { type: 'password', autocomplete: 'new-password', extra: `${NEW_PASSWORD_BOUNDS} autofocus` })}`;
  return page({
    title: `Join ${p.projectName}`,
    status: p.status ?? 200,
    content: `${alert(p.error)}<p>You are invited to join <strong>${escapeHtml(p.projectName)}</strong> as <strong>${escapeHtml(p.email)}</strong>.</p>
<form method="post" action="${INVITATION_PATH}/form" id="invitation-form">
<input type="hidden" name="token" value="${escapeHtml(p.token)}">
${fields}
<button type="submit">Join the project</button>
</form>`,
  });
}

/** After joining: where to sign in now. */
export function invitationAcceptedPage(p: { email: string; accountCreated: boolean; consoleUrl: string }): Page {
  return messagePage({
    title: 'You have joined',
    role: 'status',
    message: `${p.email} is now a member of the project. Sign in to the app that invited you${p.accountCreated ? ' with this address and your new password' : ''}, or to the Atrium console.`,
    link: { href: p.consoleUrl, text: 'Open the Atrium console' },
  });
}

/** A link that is revoked, used, replaced or expired; `reason` is a sentence. */
export function invitationGonePage(reason: string): Page {
  return messagePage({ title: 'This invitation cannot be used', role: 'alert', status: 404, message: `${reason} Ask the project's admin to send a new one.` });
}

// --- development outbox ---------------------------------------------------------------------------

export interface MailSummary {
  id: string;
  recipient: string;
  subject: string;
  createdAt: Date;
}

/** `keyQuery` (`?key=…`) goes with every link to the mailbox's own pages. */
export function outboxPage(mails: MailSummary[], keyQuery: string): Page {
  const rows = mails.map((m) => `<tr><td>${escapeHtml(m.createdAt.toISOString().replace('T', ' ').slice(0, 19))}</td><td>${escapeHtml(m.recipient)}</td><td><a href="/dev/mail/${encodeURIComponent(m.id)}${escapeHtml(keyQuery)}">${escapeHtml(m.subject)}</a></td></tr>`).join('\n');
  return page({
    title: 'Development mail outbox',
    content: `<p class="muted">No SMTP server is configured, so mail the service sends is kept here. Never enable this in production.</p>
${mails.length > 0 ? `<table><thead><tr><th scope="col">Sent (UTC)</th><th scope="col">To</th><th scope="col">Subject</th></tr></thead><tbody>${rows}</tbody></table>` : '<p>No mail yet.</p>'}`,
  });
}

export function outboxMailPage(mail: MailSummary & { text: string }, keyQuery: string): Page {
  // Links in the text become clickable so the quick start can follow confirmation links.
  const linked = escapeHtml(mail.text).replace(/https?:\/\/[^\s<]+/g, (url) => `<a href="${url}">${url}</a>`);
  return page({
    title: mail.subject,
    content: `<p class="muted">To ${escapeHtml(mail.recipient)} · ${escapeHtml(mail.createdAt.toISOString())}</p>
<pre id="mail-body">${linked}</pre>
<p class="links"><a href="/dev/mail${escapeHtml(keyQuery)}">All mail</a></p>`,
  });
}
