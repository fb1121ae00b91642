import { Code, Stack, Tabs, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { ListPage } from '../../ui/ListPage.tsx';
import { MetricCharts } from './MetricCharts.tsx';
import { participantsText, StatusBadge } from './parts.tsx';
import { SpanWaterfall } from './SpanWaterfall.tsx';

type Event = { type: string; created_at: string; time_unix_nano: string; data: Record<string, unknown> };

/** While a session runs, its page asks again this often. */
const LIVE_MS = 5_000;

export default function SessionDetail() {
  const { projectId, can, path } = useProject();
  const sessionId = useParams().sessionId!;
  const byId = { params: { path: { project_id: projectId, session_id: sessionId } } };
  const session = useQuery({
    queryKey: projectKey(projectId, 'sessions', 'one', sessionId),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/sessions/{session_id}', byId)),
    refetchInterval: (query) => query.state.data?.status === 'ended' ? false : LIVE_MS,
  });
  if (!session.data) return <ErrorAlert error={session.error} />;
  const current = session.data;
  return (
    <Stack>
      <DetailHeader
        title={`Session of ${current.room_name}`}
        back={{ to: path('sessions'), label: 'Sessions' }}
        actions={can('developer') && current.status === 'active' && (
          <ConfirmButton label="Terminate" title={`Terminate the session of ${current.room_name}?`} message="The room server is asked to end the room now; everyone in it is disconnected." onConfirm={async () => {
            await unwrap(api.POST('/accounts/projects/{project_id}/sessions/{session_id}/terminate', { ...byId, body: {} }));
            await invalidate(projectKey(projectId, 'sessions'));
          }} />
        )}
      />
      <Facts rows={[
        ['Id', current.id],
        ['Status', <StatusBadge key="status" session={current} />],
        ['Kind', current.kind === 'agent' ? `agent ${current.agent_name ?? ''}` : 'room'],
        ['Started', formatTime(current.started_at)],
        ['Ended', formatTime(current.ended_at)],
        ['Participants', participantsText(current.participants)],
        ['Termination', current.termination ? `${current.termination.status} (requested ${formatTime(current.termination.requested_at)}, ${current.termination.attempt_count} attempts)${current.termination.error ? `: ${current.termination.error}` : ''}` : '—'],
        ['Telemetry kept', `${current.telemetry.events} events, ${current.telemetry.spans} spans, ${current.telemetry.metrics} metric points`],
      ]} />
      <Tabs defaultValue="events" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="events">Events</Tabs.Tab>
          <Tabs.Tab value="spans">Spans</Tabs.Tab>
          <Tabs.Tab value="metrics">Metrics</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="events" pt="md">
          <ListPage<Event>
            title="Events"
            queryKey={projectKey(projectId, 'sessions', 'events', sessionId)}
            refetchInterval={current.status === 'ended' ? undefined : LIVE_MS}
            filterLabel="Filter by type (exact, e.g. log)"
            load={async ({ offset, limit, filter }) => {
              const page = await unwrap(api.GET('/accounts/projects/{project_id}/sessions/{session_id}/events', { params: { ...byId.params, query: { offset, limit: Math.min(limit, 500), ...(filter ? { type: filter } : {}) } } }));
              return { items: page.events as Event[], total: page.total };
            }}
            columns={[
              { header: 'Type', cell: (event) => event.type },
              { header: 'At', cell: (event) => formatTime(event.created_at) },
              { header: 'What', cell: (event) => <EventText event={event} /> },
            ]}
            rowKey={(event) => `${event.time_unix_nano}/${event.type}/${JSON.stringify(event.data).slice(0, 80)}`}
            empty="No events."
          />
        </Tabs.Panel>
        <Tabs.Panel value="spans" pt="md"><SpanWaterfall projectId={projectId} sessionId={sessionId} /></Tabs.Panel>
        <Tabs.Panel value="metrics" pt="md"><MetricCharts projectId={projectId} sessionId={sessionId} /></Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function EventText({ event }: { event: Event }) {
  const data = event.data;
  if (event.type === 'log') return <Text size="sm">{data.severity_text ? `[${String(data.severity_text)}] ` : ''}{String(data.body ?? '')}</Text>;
  if (event.type.startsWith('participant.')) return <Text size="sm">{String(data.name ?? data.participant_id ?? '')}{data.role ? ` (${String(data.role)})` : ''}</Text>;
  if (Object.keys(data).length === 0) return null;
  return <Code>{JSON.stringify(data)}</Code>;
}
