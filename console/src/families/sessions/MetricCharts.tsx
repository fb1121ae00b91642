// A session's metric points as one small line chart per metric (ui/charts.tsx): sums and
// gauges by value, histograms and summaries by their sum. The first 1,000 points, by time.
import { Loader, SimpleGrid, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { LineChart, type TimePoint } from '../../ui/charts.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';

const MAX_POINTS = 1000;

export function MetricCharts({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const metrics = useQuery({
    queryKey: projectKey(projectId, 'sessions', 'metrics', sessionId),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/sessions/{session_id}/metrics', { params: { path: { project_id: projectId, session_id: sessionId }, query: { limit: MAX_POINTS } } })),
  });
  if (metrics.error) return <ErrorAlert error={metrics.error} />;
  if (!metrics.data) return <Loader aria-label="Loading metrics" />;
  if (metrics.data.metrics.length === 0) return <Text c="dimmed">No metrics.</Text>;
  const series = new Map<string, { unit: string; points: TimePoint[] }>();
  for (const point of metrics.data.metrics) {
    const y = point.value ?? point.sum ?? point.count;
    if (y === null) continue;
    const entry = series.get(point.name) ?? { unit: point.unit, points: [] };
    entry.points.push({ t: new Date(point.ended_at).getTime(), y });
    series.set(point.name, entry);
  }
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="metric-charts">
      {[...series].map(([name, { unit, points }]) => <LineChart key={name} name={name} unit={unit} points={points} />)}
    </SimpleGrid>
  );
}
