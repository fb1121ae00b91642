// The frame around every signed-in page: the project switcher, the colour scheme, the user menu,
// and the navigation of the current project's families.
import { AppShell, Burger, Button, Group, Menu, NavLink, ScrollArea, SegmentedControl, Select, Text, UnstyledButton, useMantineColorScheme, type MantineColorScheme } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, Outlet, useLocation, useMatch, useNavigate } from 'react-router';
import { api, unwrap } from '../api.ts';
import { signOut } from '../auth/session.ts';
import { navigation } from '../families/index.ts';
import { FormModal } from '../ui/FormModal.tsx';
import { invalidate, meQuery, projectsQuery, roleQuery } from './query.ts';

function ColorScheme() {
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <SegmentedControl
      size="xs"
      aria-label="Colour scheme"
      value={colorScheme}
      onChange={(value) => setColorScheme(value as MantineColorScheme)}
      data={[{ value: 'light', label: 'Light' }, { value: 'dark', label: 'Dark' }, { value: 'auto', label: 'Auto' }]}
    />
  );
}

export function NewProjectModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  return (
    <FormModal
      opened={opened}
      onClose={onClose}
      title="New project"
      fields={[{ kind: 'text', name: 'name', label: 'Name', required: true }]}
      initialValues={{ name: '' }}
      submitLabel="Create project"
      submit={async ({ name }) => {
        const project = await unwrap(api.POST('/accounts/projects', { body: { name } }));
        await invalidate(['projects']);
        navigate(`/p/${project.id}`);
      }}
    />
  );
}

function ProjectSwitcher({ current }: { current: string | undefined }) {
  const projects = useQuery(projectsQuery);
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <Group gap="xs">
      <Select
        aria-label="Project"
        placeholder="Choose a project"
        data={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))}
        value={current ?? null}
        onChange={(id) => id && navigate(`/p/${id}`)}
        searchable
        allowDeselect={false}
        w={240}
      />
      <Button variant="subtle" size="xs" onClick={() => setCreating(true)}>New project</Button>
      <NewProjectModal opened={creating} onClose={() => setCreating(false)} />
    </Group>
  );
}

function UserMenu() {
  const me = useQuery(meQuery);
  return (
    <Menu position="bottom-end">
      <Menu.Target>
        <UnstyledButton aria-label="Account menu"><Text size="sm">{me.data?.email ?? '…'}</Text></UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Item component={Link} to="/profile">Profile</Menu.Item>
        <Menu.Item color="red" onClick={() => void signOut()}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

function ProjectNav({ projectId, close }: { projectId: string; close: () => void }) {
  const { pathname } = useLocation();
  const role = useQuery(roleQuery(projectId));
  const roles = new Set(role.data?.roles ?? []);
  const base = `/p/${projectId}`;
  return (
    <nav aria-label="Project">
      {navigation.map((group) => {
        const shown = group.families.filter((family) => roles.has(family.needs));
        if (shown.length === 0) return null;
        const links = shown.map((family) => {
          const to = family.path ? `${base}/${family.path}` : base;
          const active = family.path ? pathname.startsWith(to) : pathname === base;
          return <NavLink key={family.id} component={Link} to={to} label={family.label} active={active} onClick={close} />;
        });
        if (!group.section) return <div key="project">{links}</div>;
        return (
          <div key={group.section}>
            <Text component="h2" size="xs" fw={700} c="dimmed" tt="uppercase" px="sm" pt="md" pb={4} m={0}>{group.section}</Text>
            {links}
          </div>
        );
      })}
    </nav>
  );
}

export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const projectId = useMatch('/p/:projectId/*')?.params.projectId;
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Navigation" />
            <Text fw={700} component={Link} to="/">Atrium</Text>
            <ProjectSwitcher current={projectId} />
          </Group>
          <Group wrap="nowrap">
            <ColorScheme />
            <UserMenu />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        <ScrollArea>{projectId ? <ProjectNav projectId={projectId} close={close} /> : <Text c="dimmed" size="sm" p="xs">Choose a project</Text>}</ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main><Outlet /></AppShell.Main>
    </AppShell>
  );
}
