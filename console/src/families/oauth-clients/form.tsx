// The fields of an OAuth client, shared by create and edit, and the live preview of the consent
// page it brands (the colours and layout of the sign-in pages, src/modules/oauth/assets.ts).
import { Box, Button, Group, Image, List, Paper, Stack, Text, Title } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import type { BodyOf } from '../../api.ts';
import { PUBLIC_URL } from '../../config.ts';
import { every } from '../../ui/exhaustive.ts';
import type { Field } from '../../ui/FormModal.tsx';

type Create = BodyOf<'/accounts/projects/{project_id}/oauth/clients', 'post'>;
type GrantType = Create['grant_types'][number];

const GRANT_TYPES = every<GrantType>()(['authorization_code', 'refresh_token', 'client_credentials']);
// The registration's scope is one string; its allowed words are listed in the route's description.
const SCOPES = ['openid', 'profile', 'email', 'offline_access', 'profile:read', 'rooms:connect', 'llm:invoke', 'secrets:proxy', 'llm_proxy'];
const THEMES = ['auto', 'light', 'dark'];

export interface ClientValues extends Record<string, unknown> {
  name: string;
  redirect_uris: string[];
  grant_types: GrantType[];
  scope: string[];
  metadata: { logo_url: string; theme: string };
  public: boolean;
}

export function clientFields(creating: boolean): Field[] {
  return [
    { kind: 'text', name: 'name', label: 'Name', required: true, placeholder: 'Shown on the consent page' },
    { kind: 'tags', name: 'redirect_uris', label: 'Redirect URIs', description: 'Exact URIs the application receives codes at; press Enter after each.', placeholder: 'https://app.example.com/callback' },
    { kind: 'multiselect', name: 'grant_types', label: 'Grant types', required: true, options: GRANT_TYPES },
    { kind: 'multiselect', name: 'scope', label: 'Scopes', required: true, options: SCOPES },
    { kind: 'text', name: 'metadata.logo_url', label: 'Logo URL', placeholder: 'https://app.example.com/logo.png' },
    { kind: 'select', name: 'metadata.theme', label: 'Theme of the sign-in pages', options: THEMES },
    ...(creating ? [{ kind: 'switch' as const, name: 'public', label: 'Public client (single-page or native app: no secret, PKCE only)' }] : []),
  ];
}

/** The API body for the form's values; on edit an emptied logo is removed (null). */
export function clientBody(values: ClientValues, creating: boolean) {
  const logo = values.metadata.logo_url.trim();
  return {
    name: values.name,
    redirect_uris: values.redirect_uris,
    grant_types: values.grant_types,
    response_types: values.grant_types.includes('authorization_code') ? ['code' as const] : [],
    scope: values.scope.join(' '),
    metadata: { theme: values.metadata.theme, ...(logo ? { logo_url: logo } : creating ? {} : { logo_url: null }) },
  };
}

const LOOK = {
  light: { page: 'rgb(244, 245, 247)', card: '#ffffff', text: '#1a1d23', muted: '#5c6370' },
  dark: { page: 'rgb(15, 17, 21)', card: '#1b1e25', text: '#e8eaed', muted: '#9aa0a6' },
};

/** What the consent page will look like for this client. */
export function ConsentPreview({ values }: { values: ClientValues }) {
  const prefersDark = useMediaQuery('(prefers-color-scheme: dark)');
  const theme = values.metadata.theme === 'auto' ? (prefersDark ? 'dark' : 'light') : values.metadata.theme === 'dark' ? 'dark' : 'light';
  const look = LOOK[theme];
  const logo = values.metadata.logo_url.trim() || `${PUBLIC_URL}/signin/assets/logo.svg`;
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500}>Consent page preview</Text>
      <Box p="lg" style={{ background: look.page, borderRadius: 8 }} data-testid="consent-preview" data-theme={theme}>
        <Paper p="lg" maw={360} mx="auto" style={{ background: look.card, color: look.text }}>
          <Stack align="center" gap="xs">
            <Image src={logo} alt="Application logo" w={48} h={48} fit="contain" />
            <Title order={4} ta="center" style={{ color: look.text }}>Allow {values.name || 'your application'} to access your account?</Title>
            <List size="sm" style={{ color: look.muted }}>
              {values.scope.map((scope) => <List.Item key={scope}>{scope}</List.Item>)}
            </List>
            <Group><Button size="xs" variant="default">Deny</Button><Button size="xs">Allow</Button></Group>
          </Stack>
        </Paper>
      </Box>
    </Stack>
  );
}
