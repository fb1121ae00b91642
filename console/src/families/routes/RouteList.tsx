import { Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { backendOf, ROUTE_TEMPLATE, routeBody, SPEC_FIELDS, specErrorField, type Route } from './spec.tsx';

export default function RouteList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Route>
        title="Routes"
        description="Domains whose traffic goes to a room's services or a managed agent. A domain belongs to one project."
        queryKey={projectKey(projectId, 'routes')}
        filterLabel="Filter by domain"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/routes', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.routes, total: page.total };
        }}
        columns={[
          { header: 'Domain', cell: (route) => route.domain },
          { header: 'To', cell: backendOf },
          { header: 'Port', cell: (route) => route.port ?? '—' },
          { header: 'Updated', cell: (route) => formatTime(route.updated_at) },
        ]}
        rowKey={(route) => route.domain}
        rowLink={(route) => path(`routes/${encodeURIComponent(route.domain)}`)}
        actions={can('route_creator') && <Button onClick={() => setCreating(true)}>New route</Button>}
        empty="No routes yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New route"
        fields={SPEC_FIELDS}
        initialValues={{ spec: ROUTE_TEMPLATE }}
        submitLabel="Create route"
        errorField={specErrorField}
        submit={async ({ spec }) => {
          // The route's body is typed as an open object (the short form or {spec}), checked by the API.
          const { route } = await unwrap(api.POST('/accounts/projects/{project_id}/routes', { params: { path: { project_id: projectId } }, body: routeBody(spec) as never }));
          await invalidate(projectKey(projectId, 'routes'));
          navigate(path(`routes/${encodeURIComponent(route.domain)}`));
        }}
      />
    </>
  );
}
