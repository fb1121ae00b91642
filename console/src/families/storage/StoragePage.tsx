// Project storage: browse folders, upload with progress, download, delete.
import { Anchor, Breadcrumbs, Button, FileButton, Group, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatBytes, formatTime } from '../../ui/format.ts';
import { uploadFile } from './upload.ts';

const join = (folder: string, name: string) => (folder ? `${folder}/${name}` : name);

export default function StoragePage() {
  const { projectId, can } = useProject();
  const [search, setSearch] = useSearchParams();
  const folder = search.get('path') ?? '';
  const [progress, setProgress] = useState<{ name: string; fraction: number }>();
  const [failure, setFailure] = useState<unknown>();
  const key = projectKey(projectId, 'storage');
  const listing = useQuery({
    queryKey: [...key, folder],
    queryFn: () => unwrap(api.GET('/projects/{project_id}/storage', { params: { path: { project_id: projectId }, query: { path: folder } } })),
  });
  const open = (path: string) => setSearch(path ? { path } : {});

  const upload = async (file: File | null) => {
    if (!file) return;
    setFailure(undefined);
    setProgress({ name: file.name, fraction: 0 });
    try {
      await uploadFile(projectId, join(folder, file.name), file, (fraction) => setProgress({ name: file.name, fraction }));
      await invalidate(key);
    } catch (error) {
      setFailure(error);
    } finally {
      setProgress(undefined);
    }
  };

  const download = async (path: string, name: string) => {
    setFailure(undefined);
    try {
      const blob = await unwrap(api.GET('/projects/{project_id}/storage/download', { params: { path: { project_id: projectId }, query: { path } }, parseAs: 'blob' })) as unknown as Blob;
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = name;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    } catch (error) {
      setFailure(error);
    }
  };

  const crumbs = folder ? folder.split('/') : [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Storage</Title>
        {can('developer') && <FileButton onChange={upload}>{(props) => <Button {...props} disabled={progress !== undefined}>Upload a file</Button>}</FileButton>}
      </Group>
      <Breadcrumbs aria-label="Folder">
        <Anchor component="button" type="button" onClick={() => open('')}>Project storage</Anchor>
        {crumbs.map((name, index) => <Anchor component="button" type="button" key={index} onClick={() => open(crumbs.slice(0, index + 1).join('/'))}>{name}</Anchor>)}
      </Breadcrumbs>
      {progress && (
        <Stack gap={4}>
          <Text size="sm">Uploading {progress.name}…</Text>
          <Progress value={progress.fraction * 100} aria-label={`Upload of ${progress.name}`} />
        </Stack>
      )}
      <ErrorAlert error={failure ?? listing.error} />
      {listing.data?.files.length === 0 && <Text c="dimmed">This folder is empty.</Text>}
      {listing.data && listing.data.files.length > 0 && (
        <Table striped highlightOnHover>
          <Table.Thead><Table.Tr><Table.Th>Name</Table.Th><Table.Th>Size</Table.Th><Table.Th>Updated</Table.Th><Table.Th>Actions</Table.Th></Table.Tr></Table.Thead>
          <Table.Tbody>
            {listing.data.files.map((entry) => (
              <Table.Tr key={entry.path}>
                <Table.Td>{entry.is_folder ? <Anchor component="button" type="button" onClick={() => open(entry.path)}>{entry.name}/</Anchor> : entry.name}</Table.Td>
                <Table.Td>{entry.is_folder ? '—' : formatBytes(entry.size)}</Table.Td>
                <Table.Td>{formatTime(entry.updated_at)}</Table.Td>
                <Table.Td>
                  {!entry.is_folder && (
                    <Group gap="xs" wrap="nowrap">
                      <Button size="xs" variant="default" onClick={() => void download(entry.path, entry.name)}>Download</Button>
                      {can('developer') && (
                        <ConfirmButton label="Delete" title={`Delete ${entry.path}?`} message="The file is deleted from project storage." onConfirm={async () => {
                          await unwrap(api.DELETE('/projects/{project_id}/storage', { params: { path: { project_id: projectId }, query: { path: entry.path } } }));
                          await invalidate(key);
                        }} />
                      )}
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {listing.data?.truncated && <Text size="sm" c="dimmed">This folder holds more entries than are listed.</Text>}
    </Stack>
  );
}
