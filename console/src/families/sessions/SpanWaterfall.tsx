// A session's spans as a waterfall: one row per span (children under their parent), a bar from its
// start to its end on the session's time line. The first 1,000 spans, by start time.
import { Box, Group, Loader, Stack, Text, Tooltip } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { ErrorAlert } from '../../ui/feedback.tsx';

const MAX_SPANS = 1000;

interface Row { name: string; depth: number; start: number; end: number; error: boolean; id: string }

export function SpanWaterfall({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const spans = useQuery({
    queryKey: projectKey(projectId, 'sessions', 'spans', sessionId),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/sessions/{session_id}/spans', { params: { path: { project_id: projectId, session_id: sessionId }, query: { limit: MAX_SPANS } } })),
  });
  if (spans.error) return <ErrorAlert error={spans.error} />;
  if (!spans.data) return <Loader aria-label="Loading spans" />;
  if (spans.data.spans.length === 0) return <Text c="dimmed">No spans.</Text>;
  // Nanoseconds since the epoch do not fit a double exactly; times relative to the first span do.
  const first = spans.data.spans.reduce((min, span) => (BigInt(span.start_time_unix_nano) < min ? BigInt(span.start_time_unix_nano) : min), BigInt(spans.data.spans[0]!.start_time_unix_nano));
  const ms = (nanos: string) => Number(BigInt(nanos) - first) / 1e6;
  const byId = new Map(spans.data.spans.map((span) => [span.span_id, span]));
  const depthOf = (id: string | null, seen = 0): number => {
    const parent = id ? byId.get(id) : undefined;
    return parent && seen < 32 ? 1 + depthOf(parent.parent_span_id, seen + 1) : 0;
  };
  const rows: Row[] = spans.data.spans.map((span) => ({
    id: `${span.trace_id}/${span.span_id}`,
    name: span.name,
    depth: depthOf(span.parent_span_id),
    start: ms(span.start_time_unix_nano),
    end: ms(span.end_time_unix_nano),
    error: (span.status as { code?: number } | undefined)?.code === 2,
  }));
  const total = Math.max(1e-3, ...rows.map((row) => row.end));
  return (
    <Stack gap={4} data-testid="span-waterfall">
      <Text size="sm" c="dimmed">{rows.length} of {spans.data.total} spans over {total.toFixed(1)} ms</Text>
      {rows.map((row) => (
        <Group key={row.id} gap="xs" wrap="nowrap" data-testid="span">
          <Text size="sm" w={260} truncate style={{ paddingLeft: row.depth * 12 }}>{row.name}</Text>
          <Box style={{ position: 'relative', flex: 1, height: 14 }}>
            <Tooltip label={`${row.name}: ${(row.end - row.start).toFixed(2)} ms, from ${row.start.toFixed(2)} ms`}>
              <Box
                role="img"
                aria-label={`${row.name} ${(row.end - row.start).toFixed(2)} ms`}
                style={{
                  position: 'absolute',
                  left: `${(row.start / total) * 100}%`,
                  width: `max(2px, ${((row.end - row.start) / total) * 100}%)`,
                  top: 0,
                  bottom: 0,
                  borderRadius: 2,
                  background: row.error ? 'var(--mantine-color-red-6)' : 'var(--mantine-color-blue-6)',
                }}
              />
            </Tooltip>
          </Box>
          <Text size="xs" w={80} ta="right" c="dimmed">{(row.end - row.start).toFixed(2)} ms</Text>
        </Group>
      ))}
    </Stack>
  );
}
