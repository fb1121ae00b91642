import { Button, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { MAILBOX_FIELDS, mailboxBody, mailboxValues } from './form.ts';

export default function MailboxDetail() {
  const { projectId, can, path } = useProject();
  const address = useParams().address!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const byAddress = { params: { path: { project_id: projectId, address } } };
  const mailbox = useQuery({ queryKey: projectKey(projectId, 'mailboxes', address), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/mailboxes/{address}', byAddress)) });
  if (!mailbox.data) return <ErrorAlert error={mailbox.error} />;
  const current = mailbox.data.mailbox;
  return (
    <Stack>
      <DetailHeader
        title={current.address}
        back={{ to: path('mailboxes'), label: 'Mailboxes' }}
        actions={can('mailbox_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton label="Delete" title={`Delete ${current.address}?`} message="Mail to this address is no longer delivered, and the address is free for any project." onConfirm={async () => {
              await unwrap(api.DELETE('/accounts/projects/{project_id}/mailboxes/{address}', byAddress));
              await invalidate(projectKey(projectId, 'mailboxes'));
              navigate(path('mailboxes'));
            }} />
          </>
        )}
      />
      <Facts rows={[
        ['Room', current.room],
        ['Queue', current.queue],
        ['Accepts mail from', current.public ? 'anyone' : 'project members'],
        ['Annotations', Object.entries(current.annotations).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
      ]} />
      <FormModal
        key={JSON.stringify(current)}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit mailbox"
        fields={MAILBOX_FIELDS}
        initialValues={mailboxValues(current)}
        submitLabel="Save"
        submit={async (values) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/mailboxes/{address}', { ...byAddress, body: mailboxBody(values) }));
          await invalidate(projectKey(projectId, 'mailboxes'));
        }}
      />
    </Stack>
  );
}
