// The signed-in user's own profile and second factors.
import { Button, Group, Stack, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { invalidate, meQuery } from '../app/query.ts';
import { Facts } from '../ui/actions.tsx';
import { ErrorAlert } from '../ui/feedback.tsx';
import SecondFactors from './SecondFactors.tsx';

export default function Profile() {
  const me = useQuery(meQuery);
  const form = useForm({ initialValues: { first_name: '', last_name: '' } });
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => {
    if (me.data) form.setValues({ first_name: me.data.first_name, last_name: me.data.last_name });
    // The form takes the profile once it has loaded.
  }, [me.data]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!me.data) return <ErrorAlert error={me.error} />;
  const save = form.onSubmit(async (values) => {
    setFailure(undefined);
    try {
      await unwrap(api.PUT('/accounts/profiles/{user_id}', { params: { path: { user_id: 'me' } }, body: values }));
      await invalidate(['me']);
      notifications.show({ message: 'Profile saved' });
    } catch (error) {
      setFailure(error);
    }
  });
  return (
    <Stack maw={560}>
      <Title order={2}>Profile</Title>
      <Facts rows={[['Email', me.data.email], ['User id', me.data.id]]} />
      <form onSubmit={save}>
        <Stack>
          <TextInput label="First name" {...form.getInputProps('first_name')} />
          <TextInput label="Last name" {...form.getInputProps('last_name')} />
          <ErrorAlert error={failure} />
          <Group><Button type="submit">Save</Button></Group>
        </Stack>
      </form>
      <SecondFactors />
    </Stack>
  );
}
