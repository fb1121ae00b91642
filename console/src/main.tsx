// Starts the console: on the public URL's origin (the OAuth issuer), signed in (or on one of the
// pages that need no sign-in), then renders.
import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import { Alert, Button, Center, createTheme, MantineProvider, Stack } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router/dom';
import { queryClient } from './app/query.ts';
import { router } from './app/router.tsx';
import { completeSignIn, currentPath, signIn } from './auth/session.ts';
import { BASE_PATH, PUBLIC_URL } from './config.ts';
import { errorText } from './ui/feedback.tsx';

const theme = createTheme({ primaryColor: 'indigo', defaultRadius: 'md', focusRing: 'always' });
const PUBLIC_PAGES = ['/setup', '/signed-out'];

function render(content: ReactNode) {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <MantineProvider theme={theme} defaultColorScheme="auto">
        <Notifications />
        {content}
      </MantineProvider>
    </StrictMode>,
  );
}

async function start() {
  if (location.origin !== PUBLIC_URL) {
    location.replace(`${PUBLIC_URL}${location.pathname}${location.search}`);
    return;
  }
  if (location.pathname === `${BASE_PATH}/callback`) {
    try {
      const returnTo = await completeSignIn(new URL(location.href));
      history.replaceState(null, '', `${BASE_PATH}${returnTo}`);
    } catch (error) {
      render(
        <Center h="100vh">
          <Stack maw={480}>
            <Alert color="red" title="Signing in did not complete">{errorText(error)}</Alert>
            <Button onClick={() => void signIn('/')}>Sign in again</Button>
          </Stack>
        </Center>,
      );
      return;
    }
  } else if (!PUBLIC_PAGES.includes(currentPath().split('?')[0]!)) {
    await signIn(currentPath());
  }
  render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
}

void start();
