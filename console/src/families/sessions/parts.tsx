import { Badge } from '@mantine/core';

export function StatusBadge({ session }: { session: { status: string; ended_reason: string | null } }) {
  const color = session.status === 'active' ? 'green' : session.status === 'terminating' ? 'orange' : 'gray';
  return <Badge color={color} variant="light">{session.status}{session.ended_reason ? ` (${session.ended_reason.replaceAll('_', ' ')})` : ''}</Badge>;
}

export function participantsText(byRole: Record<string, number>): string {
  const entries = Object.entries(byRole);
  return entries.length === 0 ? '—' : entries.map(([role, n]) => `${n} ${role}`).join(', ');
}
