// Inputs that choose among what the project has instead of asking for an id: a room from the
// project's rooms (searched on the server, so any of thousands can be found), roles from the API's
// catalogue, grouped by the part of the project they are about and said in words.
import { MultiSelect, Select, Stack, Text, type ComboboxItem, type ComboboxLikeRenderOptionInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api, unwrap, type Role } from '../api.ts';
import { useProject } from '../app/project.tsx';
import { projectKey } from '../app/query.ts';

/** Rooms offered at once; typing searches the rest. */
const ROOM_CHOICES = 50;

interface InputProps<V> {
  label: string;
  description?: ReactNode;
  required?: boolean;
  value: V;
  onChange: (value: V) => void;
  error?: ReactNode;
  onFocus?: () => void;
  onBlur?: () => void;
}

export function RoomSelect({ value, onChange, ...props }: InputProps<string>) {
  const { projectId } = useProject();
  const [search, setSearch] = useState(value ?? '');
  const [debounced] = useDebouncedValue(search, 200);
  // The chosen room's own name is not a search: show the first rooms again when the field reopens.
  const filter = debounced === value ? '' : debounced.trim();
  const rooms = useQuery({
    queryKey: projectKey(projectId, 'rooms', 'choices', filter),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: projectId }, query: { limit: ROOM_CHOICES, ...(filter ? { filter } : {}) } } })),
    placeholderData: keepPreviousData,
  });
  const names = rooms.data?.rooms.map((room) => room.name) ?? [];
  const more = (rooms.data?.total ?? 0) - names.length;
  return (
    <Select
      {...props}
      data={value && !names.includes(value) ? [value, ...names] : names}
      value={value || null}
      onChange={(chosen) => onChange(chosen ?? '')}
      searchable
      searchValue={search}
      onSearchChange={setSearch}
      // The server has filtered: show what it found.
      filter={({ options }) => options}
      nothingFoundMessage={rooms.isFetching ? 'Searching…' : 'No room has that in its name'}
      placeholder="Choose a room"
      description={more > 0 ? <>{props.description} {`${more} more: type to search.`}</> : props.description}
      allowDeselect={false}
    />
  );
}

const rolesQuery = { queryKey: ['roles'], queryFn: () => unwrap(api.GET('/accounts/roles')), staleTime: Infinity } as const;

function RoleOption({ option }: ComboboxLikeRenderOptionInput<ComboboxItem & { description?: string }>) {
  return (
    <Stack gap={0}>
      <Text size="sm">{option.label}</Text>
      <Text size="xs" c="dimmed">{option.description}</Text>
    </Stack>
  );
}

/** Several project roles, by name and what they allow, grouped as the console's navigation is. */
export function RolePicker({ value, onChange, ...props }: InputProps<Role[]>) {
  const catalogue = useQuery(rolesQuery);
  const groups = new Map<string, { value: string; label: string; description: string }[]>();
  for (const role of catalogue.data?.roles ?? []) {
    const items = groups.get(role.group) ?? [];
    items.push({ value: role.name, label: role.name.replaceAll('_', ' '), description: role.description });
    groups.set(role.group, items);
  }
  return (
    <MultiSelect
      {...props}
      data={[...groups].map(([group, items]) => ({ group, items }))}
      value={value}
      onChange={(roles) => onChange(roles as Role[])}
      searchable
      renderOption={RoleOption as never}
      maxDropdownHeight={320}
      placeholder={value.length === 0 ? 'Search roles by name' : undefined}
      comboboxProps={{ withinPortal: true }}
      hidePickedOptions
    />
  );
}
