// Showing what the API said: an error in words, a copyable value, a value shown only once.
import { ActionIcon, Alert, Button, Code, CopyButton, Group, Modal, Stack, TextInput, Tooltip } from '@mantine/core';
import type { ReactNode } from 'react';
import { CheckIcon, CopyIcon } from './icons.tsx';

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function ErrorAlert({ error, title = 'That did not work' }: { error: unknown; title?: string }) {
  if (!error) return null;
  return <Alert color="red" title={title} role="alert">{errorText(error)}</Alert>;
}

/** A read-only value with a copy button, for URLs, tokens and ids. */
export function CopyField({ label, value, description }: { label: string; value: string; description?: ReactNode }) {
  return (
    <TextInput
      label={label}
      description={description}
      value={value}
      readOnly
      onFocus={(event) => event.currentTarget.select()}
      styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
      rightSection={(
        <CopyButton value={value}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : 'Copy'}>
              <ActionIcon variant="subtle" onClick={copy} aria-label={`Copy ${label}`}>{copied ? <CheckIcon /> : <CopyIcon />}</ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      )}
    />
  );
}

/** How Atrium keeps a secret it shows once: a hash (it only checks the secret), or encrypted (it uses it: a webhook's signing secret). */
const KEPT = {
  hash: 'Atrium stores only a hash of it.',
  encrypted: 'Atrium keeps it encrypted, to use it itself, and never shows it again.',
};

/** A secret the API returns once (an API key, a client secret, a signing secret). */
export function ShownOnce({ title, label, value, onClose, kept = 'hash', children }: { title: string; label: string; value: string | undefined; onClose: () => void; kept?: keyof typeof KEPT; children?: ReactNode }) {
  return (
    <Modal opened={value !== undefined} onClose={onClose} title={title} size="lg" closeOnClickOutside={false}>
      <Stack>
        <Alert color="yellow" title="You will not see this again">
          Copy the {label.toLowerCase()} now and keep it somewhere safe. {KEPT[kept]}
        </Alert>
        <CopyField label={label} value={value ?? ''} />
        {children}
        <Group justify="flex-end"><Button onClick={onClose}>I have copied it</Button></Group>
      </Stack>
    </Modal>
  );
}

export function Json({ value }: { value: unknown }) {
  return <Code block>{JSON.stringify(value, null, 2)}</Code>;
}
