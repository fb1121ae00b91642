// Starts the console: on the public URL's origin (the OAuth issuer), signed in (or on one of the
// pages that need no sign-in), then renders. Only this small module and the sign-in code load
// before the redirect to the sign-in page; the console's code is fetched while the code from the
// sign-in is redeemed.
import { completeSignIn, currentPath, signIn } from './auth/session.ts';
import { BASE_PATH, PUBLIC_URL } from './config.ts';

const PUBLIC_PAGES = ['/setup', '/signed-out'];

async function start() {
  if (location.origin !== PUBLIC_URL) {
    location.replace(`${PUBLIC_URL}${location.pathname}${location.search}`);
    return;
  }
  if (location.pathname === `${BASE_PATH}/callback`) {
    const app = import('./App.tsx');
    try {
      const returnTo = await completeSignIn(new URL(location.href));
      history.replaceState(null, '', `${BASE_PATH}${returnTo}`);
    } catch (error) {
      (await app).renderSignInFailure(error);
      return;
    }
    (await app).renderConsole();
    return;
  }
  if (!PUBLIC_PAGES.includes(currentPath().split('?')[0]!)) await signIn(currentPath());
  (await import('./App.tsx')).renderConsole();
}

void start();
