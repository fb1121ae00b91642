import { Anchor, Button, Group } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { useScope } from '../scope.ts';
import { servicesOf, type Service } from './calls.ts';
import { SPEC_TEMPLATE, specBody, specErrorField, summary } from './spec.ts';
import { SPEC_FIELDS } from './fields.tsx';

export default function ServiceList() {
  const { projectId, can } = useProject();
  const scope = useScope();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const services = servicesOf(projectId, scope.roomName);
  return (
    <>
      <ListPage<Service>
        title={scope.roomName === undefined ? 'Services' : `Services of room ${scope.roomName}`}
        description={scope.roomName === undefined
          ? 'Project services run in every room of the project; a room may also have its own.'
          : <>This room&apos;s own services; a service named like a project service replaces it in this room. {scope.back && <Anchor component={Link} to={scope.back.to}>Back to the room</Anchor>}</>}
        queryKey={projectKey(projectId, 'services', scope.roomName ?? null)}
        load={async ({ offset, limit, filter }) => {
          const page = await services.list({ offset, count: limit, ...(filter ? { filter } : {}) });
          return { items: page.services, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (service) => summary(service).name },
          { header: 'Runs', cell: (service) => summary(service).runs },
          { header: 'Ports', cell: (service) => summary(service).ports },
        ]}
        rowKey={(service) => service.id}
        rowLink={(service) => scope.path(`services/${service.id}`)}
        actions={can('service_creator') && <Group><Button onClick={() => setCreating(true)}>New service</Button></Group>}
        empty="No services yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New service"
        fields={SPEC_FIELDS}
        initialValues={{ spec: SPEC_TEMPLATE, values: '' }}
        submitLabel="Create service"
        errorField={specErrorField}
        submit={async ({ spec, values }) => {
          const service = await services.create(specBody(spec, values));
          await invalidate(projectKey(projectId, 'services'));
          navigate(scope.path(`services/${service.id}`));
        }}
      />
    </>
  );
}
