import { Anchor, Button, Code, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { loggerBody, loggerFields, loggerValues, useFeedNames } from './form.ts';

export default function LoggerDetail() {
  const { projectId, can, path } = useProject();
  const loggerId = useParams().loggerId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const feeds = useFeedNames(projectId);
  const byId = { params: { path: { project_id: projectId, logger_id: loggerId } } };
  const logger = useQuery({ queryKey: projectKey(projectId, 'llm-loggers', loggerId), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/llm-loggers/{logger_id}', byId)) });
  if (!logger.data) return <ErrorAlert error={logger.error} />;
  const current = logger.data.logger;
  return (
    <Stack>
      <DetailHeader
        title={`Logger to ${feeds.get(current.destination_feed_id) ?? 'a feed'}`}
        back={{ to: path('llm-loggers'), label: 'LLM loggers' }}
        actions={can('llm_logger_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton label="Delete" title="Delete this LLM logger?" message="Calls are no longer copied into the feed; copies already made stay." onConfirm={async () => {
              await unwrap(api.DELETE('/accounts/projects/{project_id}/llm-loggers/{logger_id}', byId));
              await invalidate(projectKey(projectId, 'llm-loggers'));
              navigate(path('llm-loggers'));
            }} />
          </>
        )}
      />
      <Facts rows={[
        ['Id', current.id],
        ['Destination feed', <Anchor key="feed" component={Link} to={path(`feeds/${current.destination_feed_id}`)}>{feeds.get(current.destination_feed_id) ?? current.destination_feed_id}</Anchor>],
        ['Filter expression', <Code key="filter">{current.filter_expression}</Code>],
        ['State', current.paused ? 'paused' : 'active'],
        ['Annotations', Object.entries(current.annotations).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
        ['Created', formatTime(current.created_at)],
        ['Updated', formatTime(current.updated_at)],
      ]} />
      <FormModal
        key={`${JSON.stringify(current)}/${feeds.size}`}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit LLM logger"
        fields={loggerFields(feeds)}
        initialValues={loggerValues(current)}
        submitLabel="Save"
        submit={async (values) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/llm-loggers/{logger_id}', { ...byId, body: loggerBody(values) }));
          await invalidate(projectKey(projectId, 'llm-loggers'));
        }}
      />
    </Stack>
  );
}
