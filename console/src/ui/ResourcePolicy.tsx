// One resource's policy (docs/policies.md): who holds which roles on this one room, feed…, beyond
// their project roles. Grant to a user, an API key or every member/developer; change roles; revoke.
// Each family's page says which resource, its roles and who may change them.
import { Anchor, Button, Group, Stack, Text } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError, api, unwrap, type ResponseOf } from '../api.ts';
import { invalidate, projectKey } from '../app/query.ts';
import { useProject } from '../app/project.tsx';
import { ConfirmButton } from './actions.tsx';
import { FormModal, type Field } from './FormModal.tsx';
import { ListPage, pageLocally } from './ListPage.tsx';

type Grant = ResponseOf<'/accounts/projects/{project_id}/policies/resources/{resource_type}/{resource_id}', 'get'>['access_grants'][number];
type Subject = { type: string; id?: string | null; email?: string | null; object_type?: string | null; relation?: string | null };

const MOST_BINDINGS = 1000;

const SUBJECT_KINDS = [
  { value: 'email', label: 'A project user, by email' },
  { value: 'user', label: 'A project user, by user id' },
  { value: 'service_account', label: 'An API key of the project, by key id' },
  { value: 'member', label: 'Every project member' },
  { value: 'developer', label: 'Every project developer' },
];

const SUBJECT_FIELDS: Field[] = [
  { kind: 'select', name: 'kind', label: 'Subject', required: true, options: SUBJECT_KINDS },
  { kind: 'text', name: 'subject', label: 'Email or id', description: 'Not needed for every member or developer.' },
];

function subjectOf(kind: string, value: string): Subject {
  if (kind === 'email') return { type: 'user', email: value.trim() };
  if (kind === 'member' || kind === 'developer') return { type: 'userset', object_type: 'project', relation: kind };
  return { type: kind, id: value.trim() };
}

/** Who a binding is for, in words. */
function describe(subject: Grant['subject']): string {
  if (subject.type === 'userset') return `every project ${subject.relation ?? 'member'}`;
  if (subject.type === 'service_account') return `API key ${subject.id}`;
  const name = [subject.first_name, subject.last_name].filter(Boolean).join(' ');
  return subject.email ? `${name ? `${name} ` : ''}<${subject.email}>` : name || `user ${subject.id}`;
}

/** The subject as the API takes it back (to change or revoke its binding). */
const sameSubject = (subject: Grant['subject']): Subject => ({ type: subject.type, id: subject.id, ...(subject.relation ? { object_type: subject.object_type ?? 'project', relation: subject.relation } : {}) });

/** Who the API did not find is about the subject; an unknown role about the roles. */
const grantErrorField = (error: unknown) => {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 404 || /subject|user|group|agent/i.test(error.message)) return 'subject';
  return /role/i.test(error.message) ? 'roles' : undefined;
};

export interface ResourcePolicyProps {
  /** The policy's `{resource_type}`, e.g. `room`. */
  type: string;
  resourceId: string;
  /** The resource in words, e.g. `room lobby`. */
  label: string;
  back: { to: string; label: string };
  /** The type's roles, strongest first (docs/permissions.md#resource-actions), and what they mean. */
  roles: readonly string[];
  rolesHelp: string;
  /** Whether the user holds the type's manage role. */
  manage: boolean;
  /** Who has every right anyway. */
  note: ReactNode;
}

export function ResourcePolicy({ type, resourceId, label, back, roles: typeRoles, rolesHelp, manage, note }: ResourcePolicyProps) {
  const { projectId } = useProject();
  const [granting, setGranting] = useState(false);
  const [changing, setChanging] = useState<Grant>();
  const resource = { project_id: projectId, resource_type: type, resource_id: resourceId };
  const key = projectKey(projectId, 'policies', type, resourceId);
  const policyPath = '/accounts/projects/{project_id}/policies/resources/{resource_type}/{resource_id}' as const;
  const grant = (subject: Subject, roles: string[]) => unwrap(api.POST(policyPath, { params: { path: resource }, body: { subject, roles } }));
  const revoke = (subject: Subject, roles?: string[]) => unwrap(api.DELETE(policyPath, { params: { path: resource }, body: { subject, ...(roles ? { roles } : {}) } }));
  const rolesField: Field = { kind: 'multiselect', name: 'roles', label: 'Roles', required: true, options: [...typeRoles], description: rolesHelp };
  return (
    <Stack>
      <ListPage<Grant>
        title={`Access policy of ${label}`}
        description={<>Roles on this {type} only, for users, API keys or every member, beyond their project roles. <Anchor component={Link} to={back.to}>{back.label}</Anchor></>}
        queryKey={key}
        filterLabel="Filter by subject"
        // Token-paged: the first 1,000 bindings of the resource are read whole, so the filter, which
        // names subjects as they are shown (emails, every member…), is applied to all of them here.
        load={async (page) => {
          const grants: Grant[] = [];
          let token: string | null | undefined;
          do {
            const next = await unwrap(api.GET(policyPath, { params: { path: resource, query: { page_size: MOST_BINDINGS, ...(token ? { continuation_token: token } : {}) } } }));
            grants.push(...next.access_grants);
            token = next.continuation_token;
          } while (token && grants.length < MOST_BINDINGS);
          const needle = page.filter.toLowerCase();
          return pageLocally(needle ? grants.filter((g) => describe(g.subject).toLowerCase().includes(needle)) : grants, page);
        }}
        columns={[
          { header: 'Subject', cell: (g) => describe(g.subject) },
          { header: 'Kind', cell: (g) => g.subject.type.replace('_', ' ') },
          { header: 'Roles', cell: (g) => g.direct_roles.join(', ') },
          ...(manage
            ? [{
              header: 'Actions',
              cell: (g: Grant) => (
                <Group gap="xs" wrap="nowrap">
                  <Button size="xs" variant="default" onClick={() => setChanging(g)}>Change roles</Button>
                  <ConfirmButton label="Revoke" title={`Revoke every role of ${describe(g.subject)}?`} message="They keep what their project roles allow." onConfirm={async () => {
                    await revoke(sameSubject(g.subject));
                    await invalidate(key);
                  }} />
                </Group>
              ),
            }]
            : []),
        ]}
        rowKey={(g) => `${g.subject.type}/${g.subject.id}/${g.subject.relation ?? ''}`}
        actions={manage && <Button onClick={() => setGranting(true)}>Grant roles</Button>}
        empty={`No one holds a role on this ${type} beyond their project roles.`}
      />
      <Text size="sm" c="dimmed">{note}</Text>
      <FormModal
        opened={granting}
        onClose={() => setGranting(false)}
        title={`Grant roles on ${label}`}
        fields={[...SUBJECT_FIELDS, rolesField]}
        initialValues={{ kind: 'email', subject: '', roles: [typeRoles.at(-2) ?? typeRoles[0]!] as string[] }}
        submitLabel="Grant"
        errorField={grantErrorField}
        submit={async ({ kind, subject, roles }) => {
          if (roles.length === 0) throw new Error('roles: pick at least one');
          await grant(subjectOf(kind, subject), roles);
          await invalidate(key);
        }}
      />
      {changing && (
        <FormModal
          opened
          onClose={() => setChanging(undefined)}
          title={`Roles of ${describe(changing.subject)}`}
          fields={[rolesField]}
          initialValues={{ roles: changing.direct_roles }}
          submitLabel="Save"
          submit={async ({ roles }) => {
            const subject = sameSubject(changing.subject);
            const removed = changing.direct_roles.filter((role) => !roles.includes(role));
            const added = roles.filter((role) => !changing.direct_roles.includes(role));
            if (added.length > 0) await grant(subject, added);
            if (removed.length > 0) await revoke(subject, removed);
            await invalidate(key);
          }}
        />
      )}
    </Stack>
  );
}
