import { Badge, SegmentedControl } from '@mantine/core';
import { useState } from 'react';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { formatTime } from '../../ui/format.ts';
import { ListPage } from '../../ui/ListPage.tsx';
import { participantsText, StatusBadge } from './parts.tsx';

type Session = ResponseOf<'/accounts/projects/{project_id}/sessions', 'get'>['sessions'][number];

/** How often the list asks again: it is the live view of what runs. */
const LIVE_MS = 5_000;

export default function SessionList() {
  const { projectId, path } = useProject();
  const [which, setWhich] = useState<'active' | 'recent'>('active');
  return (
    <ListPage<Session>
      title="Sessions"
      description={which === 'active' ? 'Rooms running now on your room servers, newest first; refreshed every few seconds.' : 'Every session, ended ones included, newest first.'}
      queryKey={projectKey(projectId, 'sessions', which)}
      refetchInterval={LIVE_MS}
      filterLabel="Filter by room name"
      load={async ({ offset, limit, filter }) => {
        const params = { path: { project_id: projectId } };
        const query = { offset, limit, ...(filter ? { filter } : {}) };
        const page = which === 'recent'
          ? await unwrap(api.GET('/accounts/projects/{project_id}/sessions', { params: { ...params, query } }))
          : await unwrap(api.GET('/accounts/projects/{project_id}/sessions/active', { params: { ...params, query } }));
        return { items: page.sessions, total: page.total };
      }}
      columns={[
        { header: 'Room', cell: (session) => session.room_name },
        { header: 'Status', cell: (session) => <StatusBadge session={session} /> },
        { header: 'Kind', cell: (session) => session.kind === 'agent' ? <Badge variant="outline">agent {session.agent_name}</Badge> : 'room' },
        { header: 'Started', cell: (session) => formatTime(session.started_at) },
        { header: 'Ended', cell: (session) => formatTime(session.ended_at) },
        { header: 'Participants', cell: (session) => participantsText(session.participants) },
      ]}
      rowKey={(session) => session.id}
      rowLink={(session) => path(`sessions/${session.id}`)}
      actions={(
        <SegmentedControl
          aria-label="Which sessions"
          value={which}
          onChange={(value) => setWhich(value as 'active' | 'recent')}
          data={[{ value: 'active', label: 'Active' }, { value: 'recent', label: 'Recent' }]}
        />
      )}
      empty={which === 'active' ? 'No session is running.' : 'No sessions yet.'}
    />
  );
}
