import { Button, Center, Stack, Text, Title } from '@mantine/core';
import { signIn } from '../auth/session.ts';

export default function SignedOut() {
  return (
    <Center h="100vh">
      <Stack align="center">
        <Title order={2}>You are signed out</Title>
        <Text>Your session in this browser has ended.</Text>
        <Button onClick={() => void signIn('/')}>Sign in again</Button>
      </Stack>
    </Center>
  );
}
