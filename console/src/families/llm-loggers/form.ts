// An LLM logger's form (docs/llm-proxy.md#llm-loggers): the destination is picked from the
// project's feeds; the API compiles the filter and names it in its 400.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { jsonValue, type Field } from '../../ui/FormModal.tsx';

export type Logger = ResponseOf<'/accounts/projects/{project_id}/llm-loggers', 'get'>['loggers'][number];

export interface LoggerValues extends Record<string, unknown> {
  destination_feed_id: string;
  filter_expression: string;
  paused: boolean;
  annotations: string;
}

/** The project's feeds (the first 1,000), by id: the choices of a destination and the names in the list. */
export function useFeedNames(projectId: string): Map<string, string> {
  const feeds = useQuery({
    queryKey: projectKey(projectId, 'feeds', 'names'),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/feeds', { params: { path: { project_id: projectId }, query: { count: 1000 } } })),
  });
  return new Map((feeds.data?.feeds ?? []).map((feed) => [feed.id, feed.name]));
}

export const loggerFields = (feeds: Map<string, string>): Field[] => [
  {
    kind: 'select', name: 'destination_feed_id', label: 'Destination feed', required: true,
    options: [...feeds].map(([value, label]) => ({ value, label })),
    description: 'The copies are published to this feed; its subscriptions write them into rooms.',
  },
  {
    kind: 'text', name: 'filter_expression', label: 'Filter expression', required: true, placeholder: "provider == 'openai' && usage.output_tokens > `1000`",
    description: 'JMESPath over each call\'s event; a truthy result copies it. `true` copies every call.',
  },
  { kind: 'switch', name: 'paused', label: 'Paused', description: 'Copies nothing while paused; calls made meanwhile are not copied later.' },
  { kind: 'json', name: 'annotations', label: 'Annotations (JSON object of strings, optional)' },
];

export const NEW_LOGGER: LoggerValues = { destination_feed_id: '', filter_expression: '`true`', paused: false, annotations: '' };

export const loggerValues = (logger: Logger): LoggerValues => ({
  destination_feed_id: logger.destination_feed_id,
  filter_expression: logger.filter_expression,
  paused: logger.paused,
  annotations: Object.keys(logger.annotations).length > 0 ? JSON.stringify(logger.annotations, null, 2) : '',
});

export const loggerBody = (values: LoggerValues) => ({
  destination_feed_id: values.destination_feed_id,
  filter_expression: values.filter_expression,
  paused: values.paused,
  annotations: (jsonValue(values.annotations) ?? {}) as Record<string, string>,
});
