// First run: the one-time link `atrium serve` prints on an empty database. It creates the first
// admin and the first project, then signs in: the setup's answer carries the new admin through the
// console's sign-in, which asks neither for the password again nor for consent (docs/oauth.md).
// Without a valid token, or once an admin exists, there is nothing here.
import { Alert, Button, Center, Loader, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useEffect, useState } from 'react';
import { signIn } from '../auth/session.ts';
import { ApiError, publicApi, unwrap } from '../api.ts';
import { errorText } from '../ui/feedback.tsx';
import { fieldOfMessage, withoutRequestPart } from '../ui/FormModal.tsx';

// The token leaves the address bar (and the history) as soon as the page has read it.
const token = new URLSearchParams(location.search).get('token') ?? '';
if (token) history.replaceState(null, '', location.pathname);

const FIELDS = ['email', 'password', 'first_name', 'last_name', 'project_name'];

export default function Setup() {
  const [state, setState] = useState<'checking' | 'open' | 'closed' | 'refused'>('checking');
  const [failure, setFailure] = useState<string>();
  const form = useForm({ initialValues: { email: '', password: '', first_name: '', last_name: '', project_name: 'My project' } });

  useEffect(() => {
    if (!token) {
      setState('refused');
      return;
    }
    unwrap(publicApi.POST('/setup/check', { body: { token } })).then(
      () => setState('open'),
      (error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return setState('closed');
        setFailure(errorText(error));
        setState('refused');
      },
    );
  }, []);

  const submit = form.onSubmit(async (values) => {
    setFailure(undefined);
    let created;
    try {
      created = await unwrap(publicApi.POST('/setup', { body: { token, ...values } }));
    } catch (error) {
      const message = errorText(error);
      const field = fieldOfMessage(message, FIELDS);
      if (field) form.setFieldError(field, withoutRequestPart(message));
      else setFailure(message);
      return;
    }
    await signIn(`/p/${created.project_id}`, values.email);
  });

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={480} maw="100%">
        {state === 'checking' && <Loader aria-label="Checking the setup link" />}
        {state === 'closed' && <Alert title="Atrium is already set up">An admin exists. <a href="/console/">Sign in to the console</a>.</Alert>}
        {state === 'refused' && <Alert color="red" title="This setup link is not valid">{failure ?? 'Use the link `npm start` printed in the terminal, on an empty database.'}</Alert>}
        {state === 'open' && (
          <form onSubmit={submit}>
            <Stack>
              <Title order={2}>Set up Atrium</Title>
              <Text c="dimmed" size="sm">Create the first admin account and the first project. You sign in with this address and password.</Text>
              <TextInput label="Email" type="email" required autoComplete="username" {...form.getInputProps('email')} />
              <PasswordInput label="Password (at least 8 characters)" required autoComplete="new-password" {...form.getInputProps('password')} />
              <TextInput label="First name" {...form.getInputProps('first_name')} />
              <TextInput label="Last name" {...form.getInputProps('last_name')} />
              <TextInput label="Project name" required {...form.getInputProps('project_name')} />
              {failure && <Alert color="red" role="alert">{failure}</Alert>}
              <Button type="submit" loading={form.submitting}>Create and sign in</Button>
            </Stack>
          </form>
        )}
      </Paper>
    </Center>
  );
}
