// The start page: the first project the user belongs to, or a way to create one.
import { Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Navigate } from 'react-router';
import { projectsQuery } from '../app/query.ts';
import { NewProjectModal } from '../app/Shell.tsx';
import { ErrorAlert } from '../ui/feedback.tsx';

export default function Home() {
  const projects = useQuery(projectsQuery);
  const [creating, setCreating] = useState(false);
  if (projects.error) return <ErrorAlert error={projects.error} title="Your projects could not be loaded" />;
  if (!projects.data) return <Center h={200}><Loader aria-label="Loading your projects" /></Center>;
  const first = projects.data.projects[0];
  if (first) return <Navigate to={`/p/${first.id}`} replace />;
  return (
    <Stack maw={520}>
      <Title order={2}>Welcome to Atrium</Title>
      <Text>You are not a member of any project yet. Create one, or ask a project admin to add you.</Text>
      <Button onClick={() => setCreating(true)} w="fit-content">Create a project</Button>
      <NewProjectModal opened={creating} onClose={() => setCreating(false)} />
    </Stack>
  );
}
