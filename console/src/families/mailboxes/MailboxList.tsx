import { Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { MAILBOX_FIELDS, mailboxBody, type Mailbox, type MailboxValues } from './form.ts';

export default function MailboxList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Mailbox>
        title="Mailboxes"
        description="Email addresses whose mail goes to a room's queue, under the mail domains the operator allows."
        queryKey={projectKey(projectId, 'mailboxes')}
        filterLabel="Filter by address"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/mailboxes', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.mailboxes, total: page.total };
        }}
        columns={[
          { header: 'Address', cell: (mailbox) => mailbox.address },
          { header: 'Room', cell: (mailbox) => mailbox.room },
          { header: 'Queue', cell: (mailbox) => mailbox.queue },
          { header: 'Accepts', cell: (mailbox) => mailbox.public ? 'anyone' : 'project members' },
        ]}
        rowKey={(mailbox) => mailbox.address}
        rowLink={(mailbox) => path(`mailboxes/${encodeURIComponent(mailbox.address)}`)}
        actions={can('mailbox_creator') && <Button onClick={() => setCreating(true)}>New mailbox</Button>}
        empty="No mailboxes yet."
      />
      <FormModal<MailboxValues & { address: string }>
        opened={creating}
        onClose={() => setCreating(false)}
        title="New mailbox"
        fields={[{ kind: 'text', name: 'address', label: 'Address', required: true, placeholder: 'support@mail.example.com' }, ...MAILBOX_FIELDS]}
        initialValues={{ address: '', room: '', queue: 'inbox', public: false, annotations: '' }}
        submitLabel="Create mailbox"
        submit={async (values) => {
          const { mailbox } = await unwrap(api.POST('/accounts/projects/{project_id}/mailboxes', { params: { path: { project_id: projectId } }, body: { address: values.address.trim(), ...mailboxBody(values) } }));
          await invalidate(projectKey(projectId, 'mailboxes'));
          navigate(path(`mailboxes/${encodeURIComponent(mailbox.address)}`));
        }}
      />
    </>
  );
}
