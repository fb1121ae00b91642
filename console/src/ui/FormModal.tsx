// Create and edit forms: fields described once, submitted to the API; an error the API names a
// field in ("redirect_uris: …", "body.name must …", "metadata.theme must be one of …") is shown under
// that field, in the API's words without the request's part ("name must not contain …"), any other
// error above the buttons. Rooms and roles are chosen from lists (pickers.tsx), never typed as ids.
import { Button, Group, JsonInput, Modal, MultiSelect, PasswordInput, Select, Stack, Switch, TagsInput, Textarea, TextInput } from '@mantine/core';
import { useForm, type GetInputPropsReturnType } from '@mantine/form';
import { useState, type ReactNode } from 'react';
import type { Role } from '../api.ts';
import { ErrorAlert } from './feedback.tsx';
import { RolePicker, RoomSelect } from './pickers.tsx';

type Options = readonly (string | { value: string; label: string })[];

/** A check of a field's value before the form is sent (with the form's other values): a message under the field, or null. */
type Check = (value: unknown, values: Record<string, unknown>) => string | null;

export type Field = { check?: Check } & (
  | { kind: 'text' | 'textarea' | 'password' | 'json' | 'code'; name: string; label: string; description?: ReactNode; required?: boolean; placeholder?: string }
  | { kind: 'select'; name: string; label: string; description?: ReactNode; required?: boolean; options: Options }
  | { kind: 'multiselect' | 'tags'; name: string; label: string; description?: ReactNode; required?: boolean; options?: Options; placeholder?: string }
  | { kind: 'switch'; name: string; label: string; description?: ReactNode }
  /** A room of the project, by name. */
  | { kind: 'room'; name: string; label: string; description?: ReactNode; required?: boolean }
  /** Project roles, from the API's catalogue. */
  | { kind: 'roles'; name: string; label: string; description?: ReactNode; required?: boolean }
);

/** A JSON field's own check: empty, or JSON. */
const jsonCheck: Check = (value) => {
  if (typeof value !== 'string' || value.trim() === '') return null;
  try {
    JSON.parse(value);
    return null;
  } catch {
    return 'Not valid JSON';
  }
};

/** An API message without the part of the request it names: "body.name must …" → "name must …". */
export const withoutRequestPart = (message: string) => message.replace(/^(body|querystring|params)\./, '');

/** The field an API error message is about: the longest field name it starts with. */
export function fieldOfMessage(message: string, names: readonly string[]): string | undefined {
  const text = withoutRequestPart(message);
  return [...names].sort((a, b) => b.length - a.length).find((name) => text === name || new RegExp(`^${name.replaceAll('.', '\\.')}(?=[ :.\\[])`).test(text));
}

export interface FormModalProps<V extends Record<string, unknown>> {
  opened: boolean;
  onClose: () => void;
  title: string;
  fields: readonly Field[];
  initialValues: V;
  submitLabel: string;
  /** Sends the values to the API; its failure is shown in the form. */
  submit: (values: V) => Promise<unknown>;
  /** Shown below the fields with the current values (a live preview). */
  preview?: (values: V) => ReactNode;
  /** The field an API error is about, when its message does not start with the field's name (a spec editor's errors name the spec's own fields). */
  errorField?: (error: unknown) => string | undefined;
}

function FieldInput({ field, props }: { field: Field; props: GetInputPropsReturnType }) {
  const common = { label: field.label, description: field.description, ...props };
  switch (field.kind) {
    case 'text': return <TextInput {...common} required={field.required} placeholder={field.placeholder} />;
    case 'password': return <PasswordInput {...common} required={field.required} />;
    case 'textarea': return <Textarea {...common} required={field.required} autosize minRows={2} />;
    case 'code': return <Textarea {...common} required={field.required} placeholder={field.placeholder} autosize minRows={10} maxRows={30} spellCheck={false} styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 'var(--mantine-font-size-sm)' } }} />;
    // Not formatted on blur: the field would grow under the pointer of a click on the button below it.
    case 'json': return <JsonInput {...common} required={field.required} autosize minRows={4} validationError="Not valid JSON" />;
    case 'select': return <Select {...common} required={field.required} data={field.options as never} allowDeselect={false} />;
    case 'multiselect': return <MultiSelect {...common} required={field.required} data={(field.options ?? []) as never} searchable />;
    case 'tags': return <TagsInput {...common} required={field.required} data={(field.options ?? []) as never} placeholder={field.placeholder} />;
    // getInputProps(name, { type: 'checkbox' }) gives `checked`, not `value`.
    case 'switch': return <Switch {...common} checked={Boolean(props.checked)} />;
    case 'room': return <RoomSelect {...common} required={field.required} value={props.value as string} onChange={props.onChange as (value: string) => void} />;
    case 'roles': return <RolePicker {...common} required={field.required} value={props.value as Role[]} onChange={props.onChange as (value: Role[]) => void} />;
  }
}

export function FormModal<V extends Record<string, unknown>>({ opened, onClose, title, fields, initialValues, submitLabel, submit, preview, errorField }: FormModalProps<V>) {
  const form = useForm<V>({
    initialValues,
    validate: Object.fromEntries(fields.flatMap((f) => {
      const checks = [...(f.kind === 'json' ? [jsonCheck] : []), ...(f.check ? [f.check] : [])];
      return checks.length === 0 ? [] : [[f.name, (value: unknown, values: Record<string, unknown>) => checks.reduce<string | null>((found, check) => found ?? check(value, values), null)]];
    })) as never,
  });
  const [failure, setFailure] = useState<unknown>();
  const [saving, setSaving] = useState(false);

  const close = () => {
    form.reset();
    setFailure(undefined);
    onClose();
  };

  const onSubmit = form.onSubmit(async (values) => {
    setSaving(true);
    setFailure(undefined);
    try {
      await submit(values);
      close();
    } catch (error) {
      const field = error instanceof Error ? fieldOfMessage(error.message, fields.map((f) => f.name)) ?? errorField?.(error) : undefined;
      if (field) form.setFieldError(field, withoutRequestPart((error as Error).message));
      else setFailure(error);
    } finally {
      setSaving(false);
    }
  });

  return (
    <Modal opened={opened} onClose={close} title={title} size="lg">
      <form onSubmit={onSubmit} noValidate>
        <Stack>
          {fields.map((field) => (
            <FieldInput key={field.name} field={field} props={form.getInputProps(field.name, field.kind === 'switch' ? { type: 'checkbox' } : undefined)} />
          ))}
          {preview?.(form.getValues())}
          <ErrorAlert error={failure} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>Cancel</Button>
            <Button type="submit" loading={saving}>{submitLabel}</Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** Parses a JSON field's text; empty means absent. */
export function jsonValue(text: unknown): Record<string, unknown> | undefined {
  return typeof text === 'string' && text.trim() !== '' ? JSON.parse(text) as Record<string, unknown> : undefined;
}
