import { Button, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { useScope } from '../scope.ts';
import { secretErrorField, secretsOf } from './calls.ts';
import { TYPE_FIELD, VALUE_FIELD } from './fields.ts';

export default function SecretDetail() {
  const { projectId, can } = useProject();
  const scope = useScope();
  const secretId = useParams().secretId!;
  const [search] = useSearchParams();
  const identities = { for_identity: search.get('for_identity') ?? '', delegated_to: search.get('delegated_to') ?? '' };
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const secrets = secretsOf(projectId, scope.roomName);
  const secret = useQuery({
    queryKey: projectKey(projectId, 'secrets', scope.roomName ?? null, secretId, identities),
    queryFn: () => secrets.get(secretId, identities),
  });
  if (!secret.data) return <ErrorAlert error={secret.error} />;
  const current = secret.data;
  const inRoom = scope.roomName !== undefined;
  return (
    <Stack>
      <DetailHeader
        title={current.name}
        back={{ to: scope.path('secrets'), label: inRoom ? `Secrets of room ${scope.roomName}` : 'Secrets' }}
        actions={can('secret_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Replace value</Button>
            <ConfirmButton label="Delete" title={`Delete secret ${current.name}?`} message="Services and participants using it lose it. This cannot be undone." onConfirm={async () => {
              await secrets.remove(current);
              await invalidate(projectKey(projectId, 'secrets'));
              navigate(scope.path('secrets'));
            }} />
          </>
        )}
      />
      <Facts rows={[
        ['Id', current.id],
        ['Of', scope.words],
        ['Type', current.type],
        ...(inRoom ? [['For', current.for_identity ?? 'the whole room'], ['Delegated to', current.delegated_to ?? '—']] as [string, string][] : []),
        ['Value', 'Write-only: set, never shown'],
      ]} />
      <FormModal
        key={`${current.name}/${current.type}`}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Replace the value"
        fields={[{ kind: 'text', name: 'name', label: 'Name', required: true }, { ...TYPE_FIELD, required: true }, VALUE_FIELD]}
        initialValues={{ name: current.name, type: current.type, value: '' }}
        submitLabel="Save"
        errorField={secretErrorField}
        submit={async (values) => {
          await secrets.replace(current, values);
          await invalidate(projectKey(projectId, 'secrets'));
        }}
      />
    </Stack>
  );
}
