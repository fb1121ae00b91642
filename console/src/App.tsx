// The console itself: Mantine, TanStack Query and the router, rendered once the user is signed in
// (or on a page that needs no sign-in). Loaded by main.tsx only then.
import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import { Alert, Button, Center, createTheme, MantineProvider, Stack } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router/dom';
import { queryClient } from './app/query.ts';
import { createRouter } from './app/router.tsx';
import { signIn } from './auth/session.ts';
import { errorText } from './ui/feedback.tsx';

const theme = createTheme({ primaryColor: 'indigo', defaultRadius: 'md', focusRing: 'always' });

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

export function renderConsole() {
  render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={createRouter()} />
    </QueryClientProvider>,
  );
}

export function renderSignInFailure(error: unknown) {
  render(
    <Center h="100vh">
      <Stack maw={480}>
        <Alert color="red" title="Signing in did not complete">{errorText(error)}</Alert>
        <Button onClick={() => void signIn('/')}>Sign in again</Button>
      </Stack>
    </Center>,
  );
}
