import type { Field } from '../../ui/FormModal.tsx';

// Suggestions only: the catalogue is docs/webhooks.md, and "*" also takes event types added later.
const EVENTS = ['*', 'room.started', 'room.ended', 'storage.file.updated', 'storage.file.deleted'];

export interface WebhookValues extends Record<string, unknown> {
  name: string;
  description: string;
  url: string;
  events: string[];
  payload: string;
}

export const webhookFields: Field[] = [
  { kind: 'text', name: 'name', label: 'Name', required: true },
  { kind: 'text', name: 'url', label: 'URL', required: true, placeholder: 'https://example.com/webhooks/atrium' },
  { kind: 'tags', name: 'events', label: 'Events', required: true, options: EVENTS, description: 'Event types to deliver; * for all.' },
  { kind: 'textarea', name: 'description', label: 'Description' },
  { kind: 'json', name: 'payload', label: 'Extra payload (JSON object merged into every body, optional)' },
];
