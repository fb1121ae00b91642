import { Anchor, Button } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { FormModal, type Field } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { useScope } from '../scope.ts';
import { secretErrorField, secretLink, secretsOf, type Secret } from './calls.ts';
import { TYPE_FIELD, VALUE_FIELD } from './fields.ts';

const PROJECT_FIELDS: Field[] = [{ kind: 'text', name: 'name', label: 'Name', required: true }, { ...TYPE_FIELD, required: true }, VALUE_FIELD];
const ROOM_FIELDS: Field[] = [
  { kind: 'text', name: 'secret_id', label: 'Id (optional)', placeholder: 'github-token', description: 'Letters, digits, . _ : -; a new id when left empty.' },
  { kind: 'text', name: 'name', label: 'Name (optional)', description: 'Defaults to the id.' },
  TYPE_FIELD,
  { kind: 'text', name: 'for_identity', label: 'For participant (optional)', description: 'Empty: the value is the whole room\'s.' },
  { kind: 'text', name: 'delegated_to', label: 'Delegated to (optional)', description: 'The identity that may use it on behalf of the participant.' },
  VALUE_FIELD,
];

export default function SecretList() {
  const { projectId, can } = useProject();
  const scope = useScope();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const secrets = secretsOf(projectId, scope.roomName);
  const inRoom = scope.roomName !== undefined;
  const done = async (secret: Secret) => {
    await invalidate(projectKey(projectId, 'secrets'));
    navigate(scope.path(secretLink(secret, inRoom)));
  };
  return (
    <>
      <ListPage<Secret>
        title={inRoom ? `Secrets of room ${scope.roomName}` : 'Secrets'}
        description={<>Values are write-only here: set them when creating or replacing, never shown again. {scope.back && <Anchor component={Link} to={scope.back.to}>Back to the room</Anchor>}</>}
        queryKey={projectKey(projectId, 'secrets', scope.roomName ?? null)}
        load={async ({ offset, limit, filter }) => {
          const page = await secrets.list({ offset, count: limit, ...(filter ? { filter } : {}) });
          return { items: page.secrets, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (secret) => secret.name },
          { header: 'Type', cell: (secret) => secret.type },
          ...(inRoom
            ? [{ header: 'For', cell: (secret: Secret) => secret.for_identity ?? 'the room' }, { header: 'Delegated to', cell: (secret: Secret) => secret.delegated_to ?? '—' }]
            : [{ header: 'Id', cell: (secret: Secret) => secret.id }]),
        ]}
        rowKey={(secret) => `${secret.id}/${secret.for_identity ?? ''}/${secret.delegated_to ?? ''}`}
        rowLink={(secret) => scope.path(secretLink(secret, inRoom))}
        actions={can('secret_creator') && <Button onClick={() => setCreating(true)}>New secret</Button>}
        empty="No secrets yet."
      />
      {inRoom
        ? (
          <FormModal
            opened={creating}
            onClose={() => setCreating(false)}
            title="New room secret"
            fields={ROOM_FIELDS}
            initialValues={{ secret_id: '', name: '', type: '', for_identity: '', delegated_to: '', value: '' }}
            submitLabel="Create secret"
            errorField={secretErrorField}
            submit={async (values) => done(await secrets.createRoomSecret(values))}
          />
        )
        : (
          <FormModal
            opened={creating}
            onClose={() => setCreating(false)}
            title="New secret"
            fields={PROJECT_FIELDS}
            initialValues={{ name: '', type: 'keys', value: '' }}
            submitLabel="Create secret"
            errorField={secretErrorField}
            submit={async (values) => done(await secrets.createProjectSecret(values))}
          />
        )}
    </>
  );
}
