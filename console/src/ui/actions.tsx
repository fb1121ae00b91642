// Buttons that change things: confirm before deleting, and a page's header with its actions.
import { Anchor, Breadcrumbs, Button, Group, Modal, Stack, Table, Text, Title } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ErrorAlert } from './feedback.tsx';

export function ConfirmButton({ label, title, message, confirmLabel = label, onConfirm, color = 'red' }: {
  label: string; title: string; message: ReactNode; confirmLabel?: string; onConfirm: () => Promise<unknown>; color?: string;
}) {
  const [opened, setOpened] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  const confirm = async () => {
    setBusy(true);
    setFailure(undefined);
    try {
      await onConfirm();
      setOpened(false);
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button variant="light" color={color} onClick={() => setOpened(true)}>{label}</Button>
      <Modal opened={opened} onClose={() => setOpened(false)} title={title}>
        <Stack>
          <Text>{message}</Text>
          <ErrorAlert error={failure} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpened(false)}>Cancel</Button>
            <Button color={color} loading={busy} onClick={confirm}>{confirmLabel}</Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

/** A detail page's title, the way back to its list, and its actions. */
export function DetailHeader({ title, back, actions }: { title: string; back: { to: string; label: string }; actions?: ReactNode }) {
  return (
    <Stack gap="xs">
      <Breadcrumbs><Anchor component={Link} to={back.to}>{back.label}</Anchor><Text>{title}</Text></Breadcrumbs>
      <Group justify="space-between">
        <Title order={2}>{title}</Title>
        <Group>{actions}</Group>
      </Group>
    </Stack>
  );
}

/** Labelled values of one resource. */
export function Facts({ rows }: { rows: [label: string, value: ReactNode][] }) {
  return (
    <Table variant="vertical" withTableBorder>
      <Table.Tbody>
        {rows.map(([label, value]) => (
          <Table.Tr key={label}><Table.Th w={220}>{label}</Table.Th><Table.Td>{value}</Table.Td></Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
