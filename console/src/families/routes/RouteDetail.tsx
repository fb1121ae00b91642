import { Button, Code, Stack, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { backendOf, routeBody, SPEC_FIELDS, specErrorField, specText } from './spec.tsx';

export default function RouteDetail() {
  const { projectId, can, path } = useProject();
  const domain = useParams().domain!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const byDomain = { params: { path: { project_id: projectId, domain } } };
  const route = useQuery({ queryKey: projectKey(projectId, 'routes', domain), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/routes/{domain}', byDomain)) });
  if (!route.data) return <ErrorAlert error={route.error} />;
  const current = route.data.route;
  const text = specText(current);
  return (
    <Stack>
      <DetailHeader
        title={current.domain}
        back={{ to: path('routes'), label: 'Routes' }}
        actions={can('route_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton label="Delete" title={`Delete the route of ${current.domain}?`} message="Its traffic goes nowhere, and the domain is free for any project to claim." onConfirm={async () => {
              await unwrap(api.DELETE('/accounts/projects/{project_id}/routes/{domain}', byDomain));
              await invalidate(projectKey(projectId, 'routes'));
              navigate(path('routes'));
            }} />
          </>
        )}
      />
      <Facts rows={[['To', backendOf(current)], ['Port', current.port ?? '—'], ['Created', formatTime(current.created_at)], ['Updated', formatTime(current.updated_at)]]} />
      <Title order={4}>Spec</Title>
      <Code block data-testid="route-spec">{text}</Code>
      <FormModal
        key={text}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit route"
        fields={SPEC_FIELDS}
        initialValues={{ spec: text }}
        submitLabel="Save"
        errorField={specErrorField}
        submit={async ({ spec }) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/routes/{domain}', { ...byDomain, body: routeBody(spec) as never }));
          await invalidate(projectKey(projectId, 'routes'));
        }}
      />
    </Stack>
  );
}
