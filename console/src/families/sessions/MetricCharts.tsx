// A session's metric points as one small line chart per metric (SVG, no chart library): sums and
// gauges by value, histograms and summaries by their sum. The first 1,000 points, by time.
import { Card, Loader, SimpleGrid, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { ErrorAlert } from '../../ui/feedback.tsx';

const MAX_POINTS = 1000;
const WIDTH = 360;
const HEIGHT = 100;

export function MetricCharts({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const metrics = useQuery({
    queryKey: projectKey(projectId, 'sessions', 'metrics', sessionId),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/sessions/{session_id}/metrics', { params: { path: { project_id: projectId, session_id: sessionId }, query: { limit: MAX_POINTS } } })),
  });
  if (metrics.error) return <ErrorAlert error={metrics.error} />;
  if (!metrics.data) return <Loader aria-label="Loading metrics" />;
  if (metrics.data.metrics.length === 0) return <Text c="dimmed">No metrics.</Text>;
  const series = new Map<string, { unit: string; points: { t: number; y: number }[] }>();
  for (const point of metrics.data.metrics) {
    const y = point.value ?? point.sum ?? point.count;
    if (y === null) continue;
    const entry = series.get(point.name) ?? { unit: point.unit, points: [] };
    entry.points.push({ t: new Date(point.ended_at).getTime(), y });
    series.set(point.name, entry);
  }
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="metric-charts">
      {[...series].map(([name, { unit, points }]) => <Chart key={name} name={name} unit={unit} points={points} />)}
    </SimpleGrid>
  );
}

function Chart({ name, unit, points }: { name: string; unit: string; points: { t: number; y: number }[] }) {
  const ts = points.map((p) => p.t);
  const ys = points.map((p) => p.y);
  const [t0, t1] = [Math.min(...ts), Math.max(...ts)];
  const [y0, y1] = [Math.min(0, ...ys), Math.max(...ys)];
  const x = (t: number) => (t1 === t0 ? WIDTH / 2 : ((t - t0) / (t1 - t0)) * WIDTH);
  const y = (v: number) => (y1 === y0 ? HEIGHT / 2 : HEIGHT - ((v - y0) / (y1 - y0)) * HEIGHT);
  const last = points.at(-1)!;
  return (
    <Card withBorder data-testid="metric-chart">
      <Text fw={500} size="sm">{name}{unit ? ` (${unit})` : ''}</Text>
      <Text size="xs" c="dimmed">{points.length} points, last {last.y}</Text>
      <svg viewBox={`-4 -4 ${WIDTH + 8} ${HEIGHT + 8}`} width="100%" height={HEIGHT + 8} role="img" aria-label={`${name} over time`}>
        <polyline fill="none" stroke="var(--mantine-color-blue-6)" strokeWidth={2} points={points.map((p) => `${x(p.t).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ')} />
        {points.length === 1 && <circle cx={x(last.t)} cy={y(last.y)} r={3} fill="var(--mantine-color-blue-6)" />}
      </svg>
    </Card>
  );
}
