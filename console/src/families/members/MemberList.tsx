// Project users and their roles, and the invitations on their way: a colleague is added by email
// (an address with an account joins at once, any other is mailed an invitation), and an invitation
// can be sent again with a new link or revoked.
import { Alert, Badge, Box, Button, Group, Tooltip } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type ResponseOf, type Role } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';

type Member = ResponseOf<'/accounts/projects/{project_id}/users', 'get'>['users'][number];
type Invitation = ResponseOf<'/accounts/projects/{project_id}/invitations', 'get'>['invitations'][number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const Roles = ({ roles }: { roles: readonly string[] }) => <Group gap={4}>{roles.map((role) => <Badge key={role} variant="light">{role}</Badge>)}</Group>;

/** What the last add did, in words: joined, or invited (and whether the mail went). */
function addedText(who: string, result: ResponseOf<'/accounts/projects/{project_id}/users', 'post'>): string {
  if (result.status === 'added') return `${who} is a member now.`;
  if (result.invitation?.mail_sent === false) return `${who} has no account yet. The invitation is saved, but this server sends no mail: set ATRIUM_SMTP_URL, then send it again.`;
  return `${who} has no account yet: an invitation is on its way. It expires ${formatTime(result.invitation?.expires_at)}.`;
}

function Invitations({ projectId }: { projectId: string }) {
  const key = projectKey(projectId, 'invitations');
  const byId = (id: string) => ({ params: { path: { project_id: projectId, invitation_id: id } } });
  const resend = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/accounts/projects/{project_id}/invitations/{invitation_id}/resend', { ...byId(id), body: {} })),
    onSuccess: () => invalidate(key),
  });
  return (
    <>
      <ListPage<Invitation>
        title="Invitations"
        description="Addresses invited to the project that have not joined yet. Sending again makes a new link (the old one stops working) and a new expiry."
        queryKey={key}
        filterLabel="Filter by email"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/invitations', { params: { path: { project_id: projectId }, query: { offset, limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.invitations, total: page.total };
        }}
        columns={[
          { header: 'Email', cell: (i) => i.email },
          { header: 'Roles', cell: (i) => <Roles roles={i.roles} /> },
          { header: 'State', cell: (i) => <Badge color={i.status === 'pending' ? 'blue' : 'gray'}>{i.status}</Badge> },
          { header: 'Sent', cell: (i) => <Tooltip label={`${i.sent_count} time(s)`}><span>{formatTime(i.last_sent_at)}</span></Tooltip> },
          { header: 'Expires', cell: (i) => formatTime(i.expires_at) },
          {
            header: 'Actions',
            cell: (i) => (
              <Group gap="xs" wrap="nowrap">
                <Button size="xs" variant="default" onClick={() => resend.mutate(i.id)} loading={resend.isPending && resend.variables === i.id}>Send again</Button>
                <ConfirmButton label="Revoke" title={`Revoke the invitation of ${i.email}?`} message="Its link stops working. You can invite the address again later." onConfirm={async () => {
                  await unwrap(api.DELETE('/accounts/projects/{project_id}/invitations/{invitation_id}', byId(i.id)));
                  await invalidate(key);
                }} />
              </Group>
            ),
          },
        ]}
        rowKey={(i) => i.id}
        empty="No invitations waiting."
      />
      <ErrorAlert error={resend.error} />
      {resend.isSuccess && <Alert color="green" role="status" withCloseButton onClose={() => resend.reset()}>Sent again to {resend.data.email}; the new link expires {formatTime(resend.data.expires_at)}.</Alert>}
    </>
  );
}

export default function MemberList() {
  const { projectId, can } = useProject();
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<string>();
  const [editing, setEditing] = useState<Member>();
  const key = projectKey(projectId, 'members');
  const params = { params: { path: { project_id: projectId } } };
  return (
    <>
      <ListPage<Member>
        title="Members"
        description="Users of this project and the roles they hold directly (admins and developers hold more by implication)."
        queryKey={key}
        filterLabel="Filter by name or email"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/users', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.users, total: page.total };
        }}
        columns={[
          { header: 'Email', cell: (member) => member.email },
          { header: 'Name', cell: (member) => `${member.first_name} ${member.last_name}`.trim() || '—' },
          { header: 'Roles', cell: (member) => <Roles roles={member.roles} /> },
          {
            header: 'Second factor',
            cell: (member) => (member.second_factor ? <Badge color="green" variant="light">Yes</Badge> : <Badge color="gray" variant="light">None</Badge>),
          },
          { header: 'Added', cell: (member) => formatTime(member.added_at) },
          ...(can('admin') ? [{
            header: 'Actions',
            cell: (member: Member) => (
              <Group gap="xs" wrap="nowrap">
                <Button size="xs" variant="default" onClick={() => setEditing(member)}>Roles</Button>
                <ConfirmButton label="Remove" title={`Remove ${member.email}?`} message="They lose access to this project." onConfirm={async () => {
                  await unwrap(api.DELETE('/accounts/projects/{project_id}/users/{user_id}', { params: { path: { project_id: projectId, user_id: member.user_id } } }));
                  await invalidate(key);
                }} />
              </Group>
            ),
          }] : []),
        ]}
        rowKey={(member) => member.user_id}
        actions={can('admin') && <Button onClick={() => setAdding(true)}>Add a member</Button>}
        empty="No members."
      />
      {added && <Alert color="green" role="status" withCloseButton onClose={() => setAdded(undefined)}>{added}</Alert>}
      {can('admin') && <Box mt="xl"><Invitations projectId={projectId} /></Box>}
      <FormModal
        opened={adding}
        onClose={() => setAdding(false)}
        title="Add a member"
        fields={[
          { kind: 'text', name: 'email', label: 'Email', required: true, placeholder: 'colleague@example.com', description: 'Someone with an account joins at once; anyone else is mailed an invitation to join.' },
          { kind: 'roles', name: 'roles', label: 'Roles', description: 'Every member can read the project and its rooms; add what they will do.' },
        ]}
        initialValues={{ email: '', roles: ['member'] as Role[] }}
        submitLabel="Add or invite"
        submit={async ({ email, roles }) => {
          const who = email.trim();
          // A user id still works, for scripts' habits; the form asks for an address.
          const body = UUID.test(who) ? { user_id: who, roles } : { email: who, roles };
          const result = await unwrap(api.POST('/accounts/projects/{project_id}/users', { ...params, body }));
          await Promise.all([invalidate(key), invalidate(projectKey(projectId, 'invitations'))]);
          setAdded(addedText(who, result));
        }}
      />
      {editing && (
        <FormModal
          opened
          onClose={() => setEditing(undefined)}
          title={`Roles of ${editing.email}`}
          fields={[{ kind: 'roles', name: 'roles', label: 'Roles' }]}
          initialValues={{ roles: editing.roles }}
          submitLabel="Save roles"
          submit={async ({ roles }) => {
            await unwrap(api.PUT('/accounts/projects/{project_id}/users/{user_id}', { params: { path: { project_id: projectId, user_id: editing.user_id } }, body: { roles } }));
            await invalidate(key);
          }}
        />
      )}
    </>
  );
}
