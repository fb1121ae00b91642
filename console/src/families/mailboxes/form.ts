import type { ResponseOf } from '../../api.ts';
import { jsonValue, type Field } from '../../ui/FormModal.tsx';

export type Mailbox = ResponseOf<'/accounts/projects/{project_id}/mailboxes', 'get'>['mailboxes'][number];

export interface MailboxValues extends Record<string, unknown> {
  room: string;
  queue: string;
  public: boolean;
  annotations: string;
}

export const MAILBOX_FIELDS: Field[] = [
  { kind: 'text', name: 'room', label: 'Room', required: true },
  { kind: 'text', name: 'queue', label: 'Queue', required: true, description: 'The room\'s queue that receives the mail.' },
  { kind: 'switch', name: 'public', label: 'Public', description: 'Accept mail from anyone, not only from project members.' },
  { kind: 'json', name: 'annotations', label: 'Annotations (JSON object of strings, optional)' },
];

export const mailboxValues = (mailbox: Mailbox): MailboxValues => ({
  room: mailbox.room,
  queue: mailbox.queue,
  public: mailbox.public,
  annotations: Object.keys(mailbox.annotations).length > 0 ? JSON.stringify(mailbox.annotations, null, 2) : '',
});

export const mailboxBody = (values: MailboxValues) => ({
  room: values.room.trim(),
  queue: values.queue.trim(),
  public: values.public,
  annotations: (jsonValue(values.annotations) ?? {}) as Record<string, string>,
});
