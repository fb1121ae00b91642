// The project's LLM usage and its cost (GET …/usage, docs/billing.md): by day and by model over a
// date range (UTC days, both ends included), for one provider or room if asked; models called
// without a price, and calls billed at their reservation because no usage came, stand out.
import { Alert, Group, Loader, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { BarList, ColumnChart } from '../../ui/charts.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatMoney } from '../../ui/format.ts';

type Row = ResponseOf<'/accounts/projects/{project_id}/usage', 'get'>['usage'][number];

const DAY = 86_400_000;
const day = (time: number) => new Date(time).toISOString().slice(0, 10);
const VALID_DAY = /^\d{4}-\d{2}-\d{2}$/;
/** The providers usage is recorded under: the LLM proxy's two, and `atrium` for session minutes. */
const PROVIDERS = [
  { value: 'openai', label: 'OpenAI' },
  { value: 'anthropic', label: 'Anthropic' },
  { value: 'atrium', label: 'Sessions' },
];

interface ModelTotal {
  model: string;
  requests: number;
  estimated: number;
  input: number;
  output: number;
  cost: number;
}

function summarise(rows: Row[]) {
  const byDay = new Map<string, number>();
  const byModel = new Map<string, ModelTotal>();
  for (const row of rows) {
    const bucket = row.start.slice(0, 10);
    byDay.set(bucket, (byDay.get(bucket) ?? 0) + row.cost);
    if (!row.model) continue;
    const total = byModel.get(row.model) ?? { model: row.model, requests: 0, estimated: 0, input: 0, output: 0, cost: 0 };
    total.requests += row.requests;
    total.estimated += row.estimated_requests;
    total.input += row.quantities.input ?? 0;
    total.output += row.quantities.output ?? 0;
    total.cost += row.cost;
    byModel.set(row.model, total);
  }
  return { byDay: [...byDay].sort(([a], [b]) => a.localeCompare(b)), byModel: [...byModel.values()].sort((a, b) => b.cost - a.cost) };
}

export default function UsagePage() {
  const { projectId } = useProject();
  const today = Date.now();
  const [from, setFrom] = useState(day(today - 29 * DAY));
  const [to, setTo] = useState(day(today));
  const [provider, setProvider] = useState<string | null>(null);
  const [room, setRoom] = useState('');
  const [roomFilter] = useDebouncedValue(room.trim(), 250);
  const valid = VALID_DAY.test(from) && VALID_DAY.test(to) && from <= to;
  const filters = {
    start: `${from}T00:00:00Z`,
    end: valid ? `${day(Date.parse(`${to}T00:00:00Z`) + DAY)}T00:00:00Z` : '',
    ...(provider ? { provider } : {}),
    ...(roomFilter ? { room: roomFilter } : {}),
  };
  // Calls are priced outside the console: the report is asked again on every visit.
  const usage = useQuery({
    queryKey: projectKey(projectId, 'usage', filters),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/usage', { params: { path: { project_id: projectId }, query: { ...filters, interval: 'day', report: 'model' } } })),
    enabled: valid,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
  const currency = usage.data?.currency ?? 'USD';
  const money = (amount: number) => formatMoney(amount, currency);
  const summary = usage.data ? summarise(usage.data.usage) : undefined;
  const total = summary?.byModel.reduce((sum, m) => sum + m.cost, 0) ?? 0;
  const requests = summary?.byModel.reduce((sum, m) => sum + m.requests, 0) ?? 0;
  return (
    <Stack>
      <div>
        <Title order={2}>Usage</Title>
        <Text c="dimmed" size="sm">What the project's LLM proxy calls and sessions used and cost, per UTC day and per model.</Text>
      </div>
      <Group align="flex-end">
        <TextInput type="date" label="From" value={from} onChange={(event) => setFrom(event.currentTarget.value)} w={180} />
        <TextInput type="date" label="To" value={to} onChange={(event) => setTo(event.currentTarget.value)} w={180} error={VALID_DAY.test(from) && VALID_DAY.test(to) && from > to ? 'After "From"' : undefined} />
        <Select label="Provider" placeholder="All providers" data={PROVIDERS} value={provider} onChange={setProvider} clearable w={180} />
        <TextInput label="Room" placeholder="All rooms" value={room} onChange={(event) => setRoom(event.currentTarget.value)} maxLength={500} w={200} />
        {usage.isFetching && <Loader size="sm" aria-label="Loading" />}
      </Group>
      <ErrorAlert error={usage.error} title="The usage could not be loaded" />
      {summary && (
        <>
          <Text data-testid="usage-total">{money(total)} in {requests} request{requests === 1 ? '' : 's'}</Text>
          {usage.data!.unpriced.length > 0 && (
            <Alert color="yellow" title="Models without a price" data-testid="usage-unpriced">
              These calls were served and recorded at no cost, since the price list has no price for their model:{' '}
              {usage.data!.unpriced.map((u) => `${u.provider}/${u.model} (${u.requests} call${u.requests === 1 ? '' : 's'})`).join(', ')}.
            </Alert>
          )}
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            <ColumnChart title="Cost by day" testId="usage-by-day" bars={summary.byDay.map(([label, cost]) => ({ label, value: cost, text: money(cost) }))} />
            {summary.byModel.length > 0
              ? <BarList title="Cost by model" testId="usage-by-model" bars={summary.byModel.map((m) => ({ label: m.model, value: m.cost, text: money(m.cost) }))} />
              : <Text c="dimmed">No usage in this range{provider || roomFilter ? ' for this provider and room' : ''}.</Text>}
          </SimpleGrid>
          {summary.byModel.length > 0 && (
            <Table striped withTableBorder>
              <Table.Thead>
                <Table.Tr><Table.Th>Model</Table.Th><Table.Th>Requests</Table.Th><Table.Th>Input tokens</Table.Th><Table.Th>Output tokens</Table.Th><Table.Th>Cost</Table.Th><Table.Th>Billed without usage</Table.Th></Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {summary.byModel.map((m) => (
                  <Table.Tr key={m.model}>
                    <Table.Td>{m.model}</Table.Td>
                    <Table.Td>{m.requests.toLocaleString()}</Table.Td>
                    <Table.Td>{m.input.toLocaleString()}</Table.Td>
                    <Table.Td>{m.output.toLocaleString()}</Table.Td>
                    <Table.Td>{money(m.cost)}</Table.Td>
                    <Table.Td>{m.estimated > 0 ? `${m.estimated} at their reservation` : ''}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </>
      )}
    </Stack>
  );
}
