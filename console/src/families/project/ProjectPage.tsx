// The project's home: what to do next (a room and its connection, an API key, an OAuth client, the
// team), each step ticked off once it is done and offered only to who may do it; then the project
// itself: what it is, whether it is enabled, whether its admins need a second factor, its settings.
import { Anchor, Badge, Button, Card, Code, Group, SimpleGrid, Stack, Switch, Text, ThemeIcon, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type Role } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { Facts } from '../../ui/actions.tsx';
import { ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';
import { CheckIcon } from '../../ui/icons.tsx';

interface Step {
  title: string;
  why: ReactNode;
  /** Who may take the step: it is not offered to anyone else. */
  needs: Role;
  /** Undefined while the answer is loading. */
  done: boolean | undefined;
  action: { label: string; to: string };
}

/** How many of a list there are: its total, or the length of a list without one. */
function useCount(enabled: boolean, key: string, load: () => Promise<number>) {
  const { projectId } = useProject();
  return useQuery({ queryKey: projectKey(projectId, key, 'count'), queryFn: load, enabled }).data;
}

function NextSteps() {
  const { projectId, can, path } = useProject();
  const params = { params: { path: { project_id: projectId } } };
  const rooms = useCount(true, 'rooms', async () => (await unwrap(api.GET('/accounts/projects/{project_id}/rooms', { params: { ...params.params, query: { limit: 1 } } }))).total);
  const keys = useCount(can('admin'), 'api-keys', async () => (await unwrap(api.GET('/accounts/projects/{project_id}/api-keys', params))).keys.length);
  const clients = useCount(can('oauth_client_inventory'), 'oauth-clients', async () => (await unwrap(api.GET('/accounts/projects/{project_id}/oauth/clients', { params: { ...params.params, query: { count: 1 } } }))).total);
  const team = useCount(can('admin'), 'members', async () => {
    const [members, invitations] = await Promise.all([
      unwrap(api.GET('/accounts/projects/{project_id}/users', { params: { ...params.params, query: { count: 1 } } })),
      unwrap(api.GET('/accounts/projects/{project_id}/invitations', { params: { ...params.params, query: { limit: 1 } } })),
    ]);
    return members.total - 1 + invitations.total;
  });
  const steps: Step[] = [
    {
      title: 'Create a room', needs: 'room_creator', done: rooms === undefined ? undefined : rooms > 0,
      why: 'Rooms are where people and agents meet; they run on your room servers.',
      action: { label: 'New room', to: path('rooms') },
    },
    {
      title: 'Connect to a room', needs: 'member', done: undefined,
      why: 'A room\'s page gives its URL and a participant token, to try it from the SDK or your app.',
      action: { label: 'Open the rooms', to: path('rooms') },
    },
    {
      title: 'Create an API key', needs: 'admin', done: keys === undefined ? undefined : keys > 0,
      why: 'Your servers and scripts call Atrium with it, and sign participant tokens for your users.',
      action: { label: 'New API key', to: path('api-keys') },
    },
    {
      title: 'Register an OAuth client', needs: 'oauth_client_creator', done: clients === undefined ? undefined : clients > 0,
      why: 'Your application signs its users in through Atrium, on pages with its name and logo.',
      action: { label: 'New OAuth client', to: path('oauth-clients') },
    },
    {
      title: 'Invite your team', needs: 'admin', done: team === undefined ? undefined : team > 0,
      why: 'Add colleagues by email; whoever has no account yet gets an invitation.',
      action: { label: 'Add a member', to: path('members') },
    },
  ];
  const offered = steps.filter((step) => can(step.needs));
  if (offered.length === 0) return null;
  return (
    <Stack gap="sm">
      <Title order={3}>Next steps</Title>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
        {offered.map((step) => (
          <Card key={step.title} withBorder padding="md" data-testid="next-step" data-done={step.done === true}>
            <Stack gap="xs" h="100%">
              <Group gap="xs" wrap="nowrap">
                {step.done && <ThemeIcon color="green" size="sm" radius="xl" aria-label="Done"><CheckIcon /></ThemeIcon>}
                <Text fw={600}>{step.title}</Text>
              </Group>
              <Text size="sm" c="dimmed" style={{ flexGrow: 1 }}>{step.why}</Text>
              <Button component={Link} to={step.action.to} variant={step.done ? 'default' : 'light'} size="xs" w="fit-content">{step.action.label}</Button>
            </Stack>
          </Card>
        ))}
      </SimpleGrid>
      <Text size="sm" c="dimmed">
        The <Anchor href="/docs" target="_blank">API reference</Anchor> lists every route; <Code>npx atrium login</Code> signs the command line in.
      </Text>
    </Stack>
  );
}

export default function ProjectPage() {
  const { projectId, project, can } = useProject();
  const [editing, setEditing] = useState(false);
  const [policyFailure, setPolicyFailure] = useState<unknown>();
  const params = { params: { path: { project_id: projectId } } };
  const status = useQuery({ queryKey: projectKey(projectId, 'status'), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/status', params)) });
  const hasSettings = Object.keys(project.settings ?? {}).length > 0;
  return (
    <Stack>
      <Group justify="space-between">
        <Group>
          <Title order={2}>{project.name}</Title>
          {status.data && <Badge color={status.data.enabled ? 'green' : 'gray'}>{status.data.enabled ? 'Enabled' : 'Disabled'}</Badge>}
        </Group>
      </Group>
      <NextSteps />
      <Title order={3}>The project</Title>
      <Facts rows={[['Project id', project.id], ['Project key', project.project_key], ['Created', formatTime(project.created_at)]]} />
      <Switch
        label="Admins need a second factor"
        description="An admin without an authenticator app or passkey cannot act as an admin until they add one on their account page."
        checked={project.admins_need_second_factor}
        disabled={!can('admin')}
        onChange={async (event) => {
          setPolicyFailure(undefined);
          try {
            await unwrap(api.PUT('/accounts/projects/{project_id}/sign-in-policy', { ...params, body: { admins_need_second_factor: event.currentTarget.checked } }));
            await invalidate(projectKey(projectId));
          } catch (error) {
            setPolicyFailure(error);
          }
        }}
      />
      <ErrorAlert error={policyFailure} />
      <Group justify="space-between">
        <Title order={4}>Settings</Title>
        {can('admin') && <Button variant="default" size="xs" onClick={() => setEditing(true)}>Edit settings</Button>}
      </Group>
      {hasSettings
        ? <Json value={project.settings} />
        : <Text size="sm" c="dimmed">No settings: a free-form JSON document your own applications may keep here.</Text>}
      <FormModal
        opened={editing}
        onClose={() => setEditing(false)}
        title="Project settings"
        fields={[{ kind: 'json', name: 'settings', label: 'Settings (JSON object)', required: true }]}
        initialValues={{ settings: JSON.stringify(project.settings, null, 2) }}
        submitLabel="Save settings"
        submit={async ({ settings }) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/settings', { ...params, body: jsonValue(settings) ?? {} }));
          await invalidate(projectKey(projectId));
        }}
      />
    </Stack>
  );
}
