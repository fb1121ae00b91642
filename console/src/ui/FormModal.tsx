// Create and edit forms: fields described once, submitted to the API; an error the API names a
// field in ("redirect_uris: …", "body.name must …", "metadata.theme must be one of …") is shown under
// that field, any other error above the buttons.
import { Button, Group, JsonInput, Modal, MultiSelect, PasswordInput, Select, Stack, Switch, TagsInput, Textarea, TextInput } from '@mantine/core';
import { useForm, type GetInputPropsReturnType } from '@mantine/form';
import { useState, type ReactNode } from 'react';
import { ErrorAlert } from './feedback.tsx';

type Options = readonly (string | { value: string; label: string })[];

export type Field =
  | { kind: 'text' | 'textarea' | 'password' | 'json' | 'code'; name: string; label: string; description?: ReactNode; required?: boolean; placeholder?: string }
  | { kind: 'select'; name: string; label: string; description?: ReactNode; required?: boolean; options: Options }
  | { kind: 'multiselect' | 'tags'; name: string; label: string; description?: ReactNode; required?: boolean; options?: Options; placeholder?: string }
  | { kind: 'switch'; name: string; label: string; description?: ReactNode };

/** The field an API error message is about: the longest field name it starts with. */
export function fieldOfMessage(message: string, names: readonly string[]): string | undefined {
  const text = message.replace(/^(body|querystring|params)\./, '');
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
    case 'json': return <JsonInput {...common} required={field.required} autosize minRows={4} formatOnBlur validationError="Not valid JSON" />;
    case 'select': return <Select {...common} required={field.required} data={field.options as never} allowDeselect={false} />;
    case 'multiselect': return <MultiSelect {...common} required={field.required} data={(field.options ?? []) as never} searchable />;
    case 'tags': return <TagsInput {...common} required={field.required} data={(field.options ?? []) as never} placeholder={field.placeholder} />;
    // getInputProps(name, { type: 'checkbox' }) gives `checked`, not `value`.
    case 'switch': return <Switch {...common} checked={Boolean(props.checked)} />;
  }
}

export function FormModal<V extends Record<string, unknown>>({ opened, onClose, title, fields, initialValues, submitLabel, submit, preview, errorField }: FormModalProps<V>) {
  const form = useForm<V>({
    initialValues,
    validate: Object.fromEntries(fields.filter((f) => f.kind === 'json').map((f) => [f.name, (value: unknown) => {
      if (typeof value !== 'string' || value.trim() === '') return null;
      try {
        JSON.parse(value);
        return null;
      } catch {
        return 'Not valid JSON';
      }
    }])) as never,
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
      if (field) form.setFieldError(field, (error as Error).message);
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
