import { Button, Code, Stack, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { useScope } from '../scope.ts';
import { servicesOf } from './calls.ts';
import { SPEC_FIELDS } from './fields.tsx';
import { specBody, specErrorField, specText, summary } from './spec.ts';

export default function ServiceDetail() {
  const { projectId, can } = useProject();
  const scope = useScope();
  const serviceId = useParams().serviceId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const services = servicesOf(projectId, scope.roomName);
  const service = useQuery({ queryKey: projectKey(projectId, 'services', scope.roomName ?? null, serviceId), queryFn: () => services.get(serviceId) });
  if (!service.data) return <ErrorAlert error={service.error} />;
  const about = summary(service.data);
  const text = specText(service.data);
  return (
    <Stack>
      <DetailHeader
        title={about.name}
        back={{ to: scope.path('services'), label: scope.roomName === undefined ? 'Services' : `Services of room ${scope.roomName}` }}
        actions={can('service_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton label="Delete" title={`Delete service ${about.name}?`} message={`The service is deleted from ${scope.words}; room servers stop running it. This cannot be undone.`} onConfirm={async () => {
              await services.remove(serviceId);
              await invalidate(projectKey(projectId, 'services'));
              navigate(scope.path('services'));
            }} />
          </>
        )}
      />
      <Facts rows={[['Id', service.data.id], ['Of', scope.words], ['Runs', about.runs], ['Ports', about.ports]]} />
      <Title order={4}>Spec</Title>
      <Code block data-testid="service-spec">{text}</Code>
      <FormModal
        key={text}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit service"
        fields={SPEC_FIELDS}
        initialValues={{ spec: text, values: '' }}
        submitLabel="Save"
        errorField={specErrorField}
        submit={async ({ spec, values }) => {
          await services.replace(serviceId, specBody(spec, values));
          await invalidate(projectKey(projectId, 'services'));
        }}
      />
    </Stack>
  );
}
