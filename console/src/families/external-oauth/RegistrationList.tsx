// External OAuth registrations of the project, or of one room: the list is the page (the API has
// no route for one registration), its rows carry the settings and their actions.
import { Anchor, Badge, Button, Group } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton } from '../../ui/actions.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { useScope } from '../scope.ts';
import { CREATE_FIELDS, EDIT_FIELDS, NEW_REGISTRATION, registrationErrorField, registrationValues, registrationsOf, type Registration } from './calls.ts';

export default function RegistrationList() {
  const { projectId, can } = useProject();
  const scope = useScope();
  const [creating, setCreating] = useState(false);
  const [changing, setChanging] = useState<Registration>();
  const registrations = registrationsOf(projectId, scope.roomName);
  const key = projectKey(projectId, 'external-oauth', scope.roomName ?? null);
  const provider = (r: Registration) => r.oauth.authorization_endpoint ? new URL(r.oauth.authorization_endpoint).host : r.connector?.server_url ?? r.connector?.openai_connector_id ?? '—';
  return (
    <>
      <ListPage<Registration>
        title={scope.roomName === undefined ? 'External OAuth' : `External OAuth of room ${scope.roomName}`}
        description={<>How agents get tokens from outside OAuth providers: endpoints, scopes, the client id and its secret (write-only). {scope.back && <Anchor component={Link} to={scope.back.to}>Back to the room</Anchor>}</>}
        queryKey={key}
        filterLabel="Filter by client id"
        load={async ({ offset, limit, filter }) => {
          const page = await registrations.list({ offset, count: limit, ...(filter ? { filter } : {}) });
          return { items: page.registrations, total: page.total };
        }}
        columns={[
          { header: 'Client id', cell: (r) => r.client_id },
          { header: 'Provider', cell: provider },
          { header: 'Scopes', cell: (r) => (r.oauth.scopes ?? []).join(' ') || '—' },
          { header: 'For', cell: (r) => r.delegated_to || 'everyone' },
          { header: 'Secret', cell: (r) => <Badge color={r.has_client_secret ? 'green' : 'gray'}>{r.has_client_secret ? 'stored' : 'none'}</Badge> },
          ...(can('external_oauth_manager')
            ? [{
              header: 'Actions',
              cell: (r: Registration) => (
                <Group gap="xs" wrap="nowrap">
                  <Button size="xs" variant="default" onClick={() => setChanging(r)}>Edit</Button>
                  <ConfirmButton label="Delete" title={`Delete the registration of ${r.client_id}?`} message="Agents can no longer get tokens from this provider through it." onConfirm={async () => {
                    await registrations.remove(r.id);
                    await invalidate(key);
                  }} />
                </Group>
              ),
            }]
            : []),
        ]}
        rowKey={(r) => r.id}
        actions={can('external_oauth_creator') && <Button onClick={() => setCreating(true)}>New registration</Button>}
        empty="No external OAuth registrations yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New external OAuth registration"
        fields={CREATE_FIELDS}
        initialValues={NEW_REGISTRATION}
        submitLabel="Register"
        errorField={registrationErrorField}
        submit={async (values) => {
          await registrations.create(values);
          await invalidate(key);
        }}
      />
      {changing && (
        <FormModal
          opened
          onClose={() => setChanging(undefined)}
          title={`Edit the registration of ${changing.client_id}`}
          fields={EDIT_FIELDS}
          initialValues={registrationValues(changing)}
          submitLabel="Save"
          errorField={registrationErrorField}
          submit={async (values) => {
            await registrations.replace(changing.id, values);
            await invalidate(key);
          }}
        />
      )}
    </>
  );
}
