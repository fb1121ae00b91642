// The project's audit log: who did what, when, with which credential. Newest first, filtered like
// the API (actor, action, target, outcome, time range), a page at a time by continuation token; a
// row opens the entry whole.
import { Badge, Button, Code, Drawer, Group, Loader, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';

type Entry = ResponseOf<'/accounts/projects/{project_id}/audit-log', 'get'>['entries'][number];

const PAGE = 100;
const OUTCOME_COLOR = { succeeded: 'green', refused: 'red', failed: 'orange' } as const;

/** A datetime-local value (the browser's time zone) as ISO 8601, or undefined when empty or invalid. */
function isoOf(local: string): string | undefined {
  const time = local ? new Date(local) : undefined;
  return time && !Number.isNaN(time.getTime()) ? time.toISOString() : undefined;
}

const actorText = (entry: Entry) => `${entry.actor.type}${entry.actor.name ? ` ${entry.actor.name}` : ''}`;

export default function AuditLog() {
  const { projectId } = useProject();
  const [typed, setTyped] = useState({ actor: '', action: '', target: '', since: '', until: '' });
  const [outcome, setOutcome] = useState<string | null>(null);
  const [shown, setShown] = useState<Entry | undefined>();
  const [debounced] = useDebouncedValue(typed, 300);
  const filters = {
    ...(debounced.actor ? { actor: debounced.actor.trim() } : {}),
    ...(debounced.action ? { action: debounced.action.trim() } : {}),
    ...(debounced.target ? { target: debounced.target.trim() } : {}),
    ...(outcome ? { outcome: outcome as Entry['outcome'] } : {}),
    ...(isoOf(debounced.since) ? { since: isoOf(debounced.since) } : {}),
    ...(isoOf(debounced.until) ? { until: isoOf(debounced.until) } : {}),
  };
  const query = useInfiniteQuery({
    queryKey: projectKey(projectId, 'audit-log', filters),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => unwrap(api.GET('/accounts/projects/{project_id}/audit-log', {
      params: { path: { project_id: projectId }, query: { ...filters, page_size: PAGE, ...(pageParam ? { continuation_token: pageParam } : {}) } },
    })),
    getNextPageParam: (last) => last.continuation_token ?? undefined,
  });
  const entries = query.data?.pages.flatMap((page) => page.entries) ?? [];
  const field = (name: keyof typeof typed, label: string, placeholder?: string, type?: string) => (
    <TextInput label={label} placeholder={placeholder} type={type} value={typed[name]} onChange={(event) => setTyped({ ...typed, [name]: event.currentTarget.value })} />
  );
  return (
    <Stack>
      <Title order={2}>Audit log</Title>
      <Text c="dimmed">Every change made through the API, with who made it, with which credential and from where; refusals and failed sign-ins too. Newest first.</Text>
      <Group align="end" wrap="wrap">
        {field('actor', 'Actor', 'user or API key id')}
        {field('action', 'Action', 'room.create or room.*')}
        {field('target', 'Target', 'resource id')}
        <Select label="Outcome" clearable value={outcome} onChange={setOutcome} data={['succeeded', 'refused', 'failed']} placeholder="any" />
        {field('since', 'Since', undefined, 'datetime-local')}
        {field('until', 'Until', undefined, 'datetime-local')}
      </Group>
      {query.error ? <ErrorAlert error={query.error} /> : null}
      {query.isPending ? <Loader /> : entries.length === 0 ? <Text>No entries match.</Text> : (
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr><Table.Th>Time</Table.Th><Table.Th>Actor</Table.Th><Table.Th>Action</Table.Th><Table.Th>Target</Table.Th><Table.Th>Outcome</Table.Th><Table.Th>Client</Table.Th></Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {entries.map((entry) => (
              <Table.Tr key={entry.id} onClick={() => setShown(entry)} style={{ cursor: 'pointer' }} aria-label={`Entry ${entry.action} at ${formatTime(entry.at)}`}>
                <Table.Td>{formatTime(entry.at)}</Table.Td>
                <Table.Td>{actorText(entry)}</Table.Td>
                <Table.Td><Code>{entry.action}</Code></Table.Td>
                <Table.Td>{entry.target.id ?? ''}</Table.Td>
                <Table.Td><Badge color={OUTCOME_COLOR[entry.outcome]} variant="light">{entry.outcome}</Badge></Table.Td>
                <Table.Td>{entry.client_address ?? ''}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {query.hasNextPage ? <Button variant="default" onClick={() => void query.fetchNextPage()} loading={query.isFetchingNextPage}>Older entries</Button> : null}
      <Drawer opened={shown !== undefined} onClose={() => setShown(undefined)} title="Audit entry" position="right" size="lg">
        {shown ? <EntryDetail entry={shown} /> : null}
      </Drawer>
    </Stack>
  );
}

function EntryDetail({ entry }: { entry: Entry }) {
  const rows: [string, string | null][] = [
    ['Time', formatTime(entry.at)],
    ['Action', entry.action],
    ['Outcome', entry.outcome],
    ['Reason', entry.reason],
    ['Target', [entry.target.type, entry.target.id].filter(Boolean).join(' ')],
    ['Actor', [entry.actor.type, entry.actor.id].filter(Boolean).join(' ')],
    ['Actor name', entry.actor.name],
    ['Credential', [entry.actor.credential_kind, entry.actor.credential_id].filter(Boolean).join(' ')],
    ['OAuth client', entry.actor.oauth_client_id],
    ['Request id', entry.request_id],
    ['Client address', entry.client_address],
    ['User agent', entry.user_agent],
    ['Entry id', entry.id],
  ];
  return (
    <Table>
      <Table.Tbody>
        {rows.filter(([, value]) => value).map(([label, value]) => (
          <Table.Tr key={label}><Table.Th>{label}</Table.Th><Table.Td>{value}</Table.Td></Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
