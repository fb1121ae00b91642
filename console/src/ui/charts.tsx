// Small SVG charts (no chart library): a line over time (a session's metrics), columns per bucket
// (usage by day) and labelled bars (usage by model). Imported by lazily loaded pages only, so they
// never weigh on the first page.
import { Card, Group, Stack, Text, Tooltip } from '@mantine/core';

const WIDTH = 360;
const HEIGHT = 100;
const COLOR = 'var(--mantine-color-blue-6)';

export interface TimePoint {
  t: number;
  y: number;
}

/** A line over time, with the number of points and the last value. */
export function LineChart({ name, unit, points }: { name: string; unit: string; points: TimePoint[] }) {
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
        <polyline fill="none" stroke={COLOR} strokeWidth={2} points={points.map((p) => `${x(p.t).toFixed(1)},${y(p.y).toFixed(1)}`).join(' ')} />
        {points.length === 1 && <circle cx={x(last.t)} cy={y(last.y)} r={3} fill={COLOR} />}
      </svg>
    </Card>
  );
}

export interface Bar {
  label: string;
  value: number;
  /** The value in words (a formatted amount). */
  text: string;
}

/** One column per bucket, in order (days…), each with its value on hover; the first and last labels below. */
export function ColumnChart({ title, bars, testId }: { title: string; bars: Bar[]; testId?: string }) {
  const top = Math.max(0, ...bars.map((b) => b.value));
  const width = WIDTH * 2;
  const step = bars.length > 0 ? width / bars.length : width;
  const gap = Math.min(4, step / 4);
  return (
    <Card withBorder data-testid={testId}>
      <Text fw={500} size="sm">{title}</Text>
      <svg viewBox={`0 -4 ${width} ${HEIGHT * 2 + 8}`} width="100%" height={HEIGHT * 2 + 8} role="img" aria-label={title}>
        <line x1={0} x2={width} y1={HEIGHT * 2} y2={HEIGHT * 2} stroke="var(--mantine-color-dimmed)" strokeWidth={1} />
        {bars.map((bar, index) => {
          const height = top > 0 ? (bar.value / top) * HEIGHT * 2 : 0;
          return (
            <rect key={bar.label} x={index * step + gap / 2} y={HEIGHT * 2 - height} width={Math.max(1, step - gap)} height={height} fill={COLOR} data-testid="column">
              <title>{`${bar.label}: ${bar.text}`}</title>
            </rect>
          );
        })}
      </svg>
      {bars.length > 0 && (
        <Group justify="space-between">
          <Text size="xs" c="dimmed">{bars[0]!.label}</Text>
          <Text size="xs" c="dimmed">{bars.at(-1)!.label}</Text>
        </Group>
      )}
    </Card>
  );
}

/** Labelled horizontal bars, largest first. */
export function BarList({ title, bars, testId }: { title: string; bars: Bar[]; testId?: string }) {
  const sorted = [...bars].sort((a, b) => b.value - a.value);
  const top = Math.max(0, ...sorted.map((b) => b.value));
  return (
    <Card withBorder data-testid={testId}>
      <Stack gap="xs">
        <Text fw={500} size="sm">{title}</Text>
        {sorted.map((bar) => (
          <div key={bar.label} data-testid="bar">
            <Group justify="space-between" gap="xs">
              <Text size="sm">{bar.label}</Text>
              <Text size="sm" c="dimmed">{bar.text}</Text>
            </Group>
            <Tooltip label={`${bar.label}: ${bar.text}`}>
              <svg viewBox="0 0 100 4" width="100%" height={10} preserveAspectRatio="none" role="img" aria-label={`${bar.label}: ${bar.text}`}>
                <rect x={0} y={0} width={top > 0 ? Math.max(0.5, (bar.value / top) * 100) : 0} height={4} fill={COLOR} />
              </svg>
            </Tooltip>
          </div>
        ))}
      </Stack>
    </Card>
  );
}
