import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

export default function NotFound() {
  return (
    <Stack>
      <Title order={2}>Page not found</Title>
      <Text>There is no console page at this address. <Anchor component={Link} to="/">Go to your projects</Anchor>.</Text>
    </Stack>
  );
}
