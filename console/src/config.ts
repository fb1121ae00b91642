// The server's public URL (ATRIUM_PUBLIC_URL), written into index.html by the server: the OAuth
// issuer the console signs in with. The built file alone (no server) falls back to this origin.
const published = document.querySelector('meta[name="atrium-public-url"]')?.getAttribute('content') ?? '';

export const PUBLIC_URL = (published.startsWith('http') ? published : location.origin).replace(/\/+$/, '');

/** Where the router's paths start. */
export const BASE_PATH = '/console';
