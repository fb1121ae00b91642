// A feed's and a subscription's forms (docs/feeds.md): visibility is chosen once, at creation; room
// and path of a subscription too.
import { ApiError, type BodyOf, type ResponseOf } from '../../api.ts';
import { every } from '../../ui/exhaustive.ts';
import { jsonValue, type Field } from '../../ui/FormModal.tsx';

export type Feed = ResponseOf<'/accounts/projects/{project_id}/feeds', 'get'>['feeds'][number];
export type Subscription = ResponseOf<'/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions', 'get'>['subscriptions'][number];
export type Visibility = NonNullable<BodyOf<'/accounts/projects/{project_id}/feeds', 'post'>['visibility']>;

export const VISIBILITIES = every<Visibility>()(['private', 'project', 'public']);

export interface FeedValues extends Record<string, unknown> {
  name: string;
  description: string;
  paused: boolean;
  message_schema: string;
  annotations: string;
}

export const FEED_FIELDS: Field[] = [
  { kind: 'text', name: 'name', label: 'Name', required: true, description: 'Unique in the project.' },
  { kind: 'textarea', name: 'description', label: 'Description' },
  { kind: 'json', name: 'message_schema', label: 'Message schema (JSON Schema, optional)', description: 'Every message must match it; empty accepts any JSON value.' },
  { kind: 'switch', name: 'paused', label: 'Paused', description: 'A paused feed refuses messages and holds back delivery until it is resumed.' },
  { kind: 'json', name: 'annotations', label: 'Annotations (JSON object of strings, optional)' },
];

export const VISIBILITY_FIELD: Field = {
  kind: 'select', name: 'visibility', label: 'Visibility', required: true, options: VISIBILITIES,
  description: 'private: only who holds feed_inventory sees it; project and public: every member. Fixed at creation.',
};

export const NEW_FEED: FeedValues & { visibility: string } = { name: '', description: '', visibility: 'private', paused: false, message_schema: '', annotations: '' };

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export const feedValues = (feed: Feed): FeedValues => ({
  name: feed.name,
  description: feed.description,
  paused: feed.paused,
  message_schema: feed.message_schema === null || feed.message_schema === true ? '' : pretty(feed.message_schema),
  annotations: Object.keys(feed.annotations).length > 0 ? pretty(feed.annotations) : '',
});

/** The schema field's text: empty means any message (null); `false` and objects as typed. */
function schemaOf(text: string): Record<string, unknown> | boolean | null {
  if (text.trim() === '') return null;
  return JSON.parse(text) as Record<string, unknown> | boolean;
}

export const feedBody = (values: FeedValues) => ({
  name: values.name.trim(),
  description: values.description,
  paused: values.paused,
  message_schema: schemaOf(values.message_schema),
  annotations: (jsonValue(values.annotations) ?? {}) as Record<string, string>,
});

export interface SubscriptionValues extends Record<string, unknown> {
  filename_datetime_format: string;
  annotations: string;
}

export const SUBSCRIPTION_FIELDS: Field[] = [
  { kind: 'text', name: 'filename_datetime_format', label: 'File name format (optional)', placeholder: 'YYYY-MM-DDThh_mm_ssZ', description: 'Tokens YYYY MM DD hh mm ss SSS (UTC, the first message\'s time); "/" makes folders.' },
  { kind: 'json', name: 'annotations', label: 'Annotations (JSON object of strings, optional)' },
];

export const NEW_SUBSCRIPTION_FIELDS: Field[] = [
  { kind: 'room', name: 'room', label: 'Room', required: true, description: 'The room whose storage receives the files. Fixed at creation.' },
  { kind: 'text', name: 'path', label: 'Path', placeholder: 'feeds/orders', description: 'The folder in the room\'s storage the files go to; empty for its root. Fixed at creation.' },
  ...SUBSCRIPTION_FIELDS,
];

export const subscriptionValues = (subscription: Subscription): SubscriptionValues => ({
  filename_datetime_format: subscription.filename_datetime_format ?? '',
  annotations: Object.keys(subscription.annotations).length > 0 ? pretty(subscription.annotations) : '',
});

export const subscriptionBody = (values: SubscriptionValues) => ({
  filename_datetime_format: values.filename_datetime_format.trim() || null,
  annotations: (jsonValue(values.annotations) ?? {}) as Record<string, string>,
});

/** A taken name is about the name. */
export const feedErrorField = (error: unknown) => error instanceof ApiError && error.status === 409 && /^A feed named/.test(error.message) ? 'name' : undefined;
