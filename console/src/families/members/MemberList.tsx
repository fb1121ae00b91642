// Project users and their roles.
import { Badge, Button, Group } from '@mantine/core';
import { useState } from 'react';
import { api, unwrap, type ResponseOf, type Role } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton } from '../../ui/actions.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { ROLE_OPTIONS } from './roles.ts';

type Member = ResponseOf<'/accounts/projects/{project_id}/users', 'get'>['users'][number];

export default function MemberList() {
  const { projectId, can } = useProject();
  const [adding, setAdding] = useState(false);
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
          { header: 'Roles', cell: (member) => <Group gap={4}>{member.roles.map((role) => <Badge key={role} variant="light">{role}</Badge>)}</Group> },
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
        actions={can('admin') && <Button onClick={() => setAdding(true)}>Add member</Button>}
        empty="No members."
      />
      <FormModal
        opened={adding}
        onClose={() => setAdding(false)}
        title="Add a member"
        fields={[
          { kind: 'text', name: 'user_id', label: 'User id', required: true, placeholder: 'The id of an existing account' },
          { kind: 'multiselect', name: 'roles', label: 'Roles', options: ROLE_OPTIONS },
        ]}
        initialValues={{ user_id: '', roles: ['member'] as Role[] }}
        submitLabel="Add"
        submit={async ({ user_id, roles }) => {
          await unwrap(api.POST('/accounts/projects/{project_id}/users', { ...params, body: { user_id, roles } }));
          await invalidate(key);
        }}
      />
      {editing && (
        <FormModal
          opened
          onClose={() => setEditing(undefined)}
          title={`Roles of ${editing.email}`}
          fields={[{ kind: 'multiselect', name: 'roles', label: 'Roles', options: ROLE_OPTIONS }]}
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
