// Connecting to a room or a managed agent from its page: the Connect button asks the API for a
// fresh connection, and a dialog shows where to connect and the token to do it with, to copy.
import { Button, Group, Modal, Stack } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { CopyField, ErrorAlert } from './feedback.tsx';

interface ConnectionField {
  label: string;
  value: string;
  description?: string;
}

/** The Connect button, the error it may end in, and the dialog showing the connection's `fields`. */
export function useConnect<T>(options: { connect: () => Promise<T>; title: string; fields: (connection: T) => ConnectionField[] }): { button: ReactNode; error: ReactNode; dialog: ReactNode } {
  const [connection, setConnection] = useState<T>();
  const mutation = useMutation({ mutationFn: options.connect, onSuccess: setConnection });
  const close = () => setConnection(undefined);
  return {
    button: <Button onClick={() => mutation.mutate()} loading={mutation.isPending}>Connect</Button>,
    error: <ErrorAlert error={mutation.error} title="Could not connect" />,
    dialog: (
      <Modal opened={connection !== undefined} onClose={close} title={options.title} size="lg">
        {connection !== undefined && (
          <Stack>
            {options.fields(connection).map((field) => <CopyField key={field.label} {...field} />)}
            <Group justify="flex-end"><Button onClick={close}>Done</Button></Group>
          </Stack>
        )}
      </Modal>
    ),
  };
}
