import { Badge, Button, Code } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { NEW_LOGGER, loggerBody, loggerFields, useFeedNames, type Logger } from './form.ts';

export default function LoggerList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const feeds = useFeedNames(projectId);
  return (
    <>
      <ListPage<Logger>
        title="LLM loggers"
        description="Copy the LLM proxy's calls that match a filter into a feed, in the background."
        queryKey={projectKey(projectId, 'llm-loggers')}
        filterLabel="Filter by expression"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/llm-loggers', { params: { path: { project_id: projectId }, query: { offset, limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.loggers, total: page.total };
        }}
        columns={[
          { header: 'Filter', cell: (logger) => <Code>{logger.filter_expression}</Code> },
          { header: 'Feed', cell: (logger) => feeds.get(logger.destination_feed_id) ?? logger.destination_feed_id },
          { header: 'State', cell: (logger) => <Badge color={logger.paused ? 'gray' : 'green'}>{logger.paused ? 'paused' : 'active'}</Badge> },
        ]}
        rowKey={(logger) => logger.id}
        rowLink={(logger) => path(`llm-loggers/${logger.id}`)}
        actions={can('llm_logger_creator') && <Button onClick={() => setCreating(true)} disabled={feeds.size === 0} title={feeds.size === 0 ? 'Create a feed first' : undefined}>New LLM logger</Button>}
        empty="No LLM loggers yet."
      />
      <FormModal
        key={feeds.size}
        opened={creating}
        onClose={() => setCreating(false)}
        title="New LLM logger"
        fields={loggerFields(feeds)}
        initialValues={{ ...NEW_LOGGER, destination_feed_id: [...feeds.keys()][0] ?? '' }}
        submitLabel="Create logger"
        submit={async (values) => {
          const { logger } = await unwrap(api.POST('/accounts/projects/{project_id}/llm-loggers', { params: { path: { project_id: projectId } }, body: loggerBody(values) }));
          await invalidate(projectKey(projectId, 'llm-loggers'));
          navigate(path(`llm-loggers/${logger.id}`));
        }}
      />
    </>
  );
}
