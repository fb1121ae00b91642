// The signed-in user's second factors on the account page: an authenticator app (QR code and the
// secret in text, confirmed with a first code), passkeys (several, named, removable) and recovery
// codes (shown once). Changes need a recent sign-in: when the API says so, the page offers one and
// comes back here.
import { Alert, Badge, Button, Group, Image, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { startRegistration } from '@simplewebauthn/browser';
import { useState } from 'react';
import { renderSVG } from 'uqr';
import { ApiError, api, unwrap, type ResponseOf } from '../api.ts';
import { invalidate } from '../app/query.ts';
import { currentPath, signIn } from '../auth/session.ts';
import { ConfirmButton } from '../ui/actions.tsx';
import { CopyField, ErrorAlert } from '../ui/feedback.tsx';
import { formatTime } from '../ui/format.ts';

type Passkey = ResponseOf<'/accounts/factors', 'get'>['passkeys'][number];

const KEY = ['factors'] as const;
const factorsQuery = { queryKey: KEY, queryFn: () => unwrap(api.GET('/accounts/factors')) } as const;

const needsFreshSignin = (error: unknown) => error instanceof ApiError && error.code === 'reauthentication_required';

const pairs = (codes: string[]) => codes.flatMap((code, i) => (i % 2 === 0 ? [codes.slice(i, i + 2)] : []));

/** Recovery codes, the one time they are shown. */
function RecoveryCodesShown({ codes, onClose }: { codes: string[] | undefined; onClose: () => void }) {
  return (
    <Modal opened={codes !== undefined} onClose={onClose} title="Your recovery codes" size="lg" closeOnClickOutside={false}>
      <Stack>
        <Alert color="yellow" title="You will not see these again">
          Each code signs you in once if you lose your authenticator app and passkeys. Keep them somewhere safe, apart from your devices.
        </Alert>
        <CopyField label="Recovery codes" value={(codes ?? []).join(' ')} />
        <Table withTableBorder id="recovery-codes">
          <Table.Tbody>
            {pairs(codes ?? []).map((pair) => <Table.Tr key={pair[0]}>{pair.map((code) => <Table.Td key={code} ff="monospace">{code}</Table.Td>)}</Table.Tr>)}
          </Table.Tbody>
        </Table>
        <Group justify="flex-end"><Button onClick={onClose}>I have saved them</Button></Group>
      </Stack>
    </Modal>
  );
}

export default function SecondFactors() {
  const factors = useQuery(factorsQuery);
  const [failure, setFailure] = useState<unknown>();
  const [codes, setCodes] = useState<string[]>();
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_uri: string }>();
  const [code, setCode] = useState('');
  const [passkeyName, setPasskeyName] = useState('');
  const [busy, setBusy] = useState(false);

  /** Runs a change; a stale sign-in becomes an offer to sign in again. */
  async function change(work: () => Promise<unknown>): Promise<void> {
    setFailure(undefined);
    setBusy(true);
    try {
      await work();
      await invalidate(KEY);
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  }

  if (!factors.data) return <ErrorAlert error={factors.error} />;
  const { totp, passkeys, recovery_codes: recovery, second_factor: hasFactor } = factors.data;

  const startTotp = () => change(async () => setEnrolment(await unwrap(api.POST('/accounts/factors/totp', { body: {} }))));
  const confirmTotp = () => change(async () => {
    const confirmed = await unwrap(api.POST('/accounts/factors/totp/confirm', { body: { code } }));
    setEnrolment(undefined);
    setCode('');
    if (confirmed.recovery_codes) setCodes(confirmed.recovery_codes);
  });
  const addPasskey = () => change(async () => {
    const options = await unwrap(api.POST('/accounts/factors/passkeys/options', { body: {} }));
    const response = await startRegistration({ optionsJSON: options as unknown as Parameters<typeof startRegistration>[0]['optionsJSON'] });
    const added = await unwrap(api.POST('/accounts/factors/passkeys', { body: { name: passkeyName || 'Passkey', response: response as unknown as Record<string, unknown> } }));
    setPasskeyName('');
    if (added.recovery_codes) setCodes(added.recovery_codes);
  });
  // A quiet zone of four modules around the code, as scanners expect (ISO/IEC 18004), whatever the page's colours.
  const qr = enrolment ? `data:image/svg+xml;utf8,${encodeURIComponent(renderSVG(enrolment.otpauth_uri, { border: 4 }))}` : undefined;

  return (
    <Stack gap="lg" id="second-factors">
      <Group>
        <Title order={3}>Second factors</Title>
        <Badge color={hasFactor ? 'green' : 'gray'} variant="light">{hasFactor ? 'On' : 'None yet'}</Badge>
      </Group>
      <Text c="dimmed">
        After your password (or an emailed code), the sign-in asks for one of these. A passkey can also sign you in on its own.
        Adding or removing one needs a sign-in of the last 10 minutes, and we email you about every change.
      </Text>
      {needsFreshSignin(failure) ? (
        <Alert color="blue" title="Sign in again to continue">
          <Stack gap="xs">
            <Text size="sm">For your security, changing second factors needs a recent sign-in.</Text>
            <Group><Button onClick={() => signIn(currentPath(), undefined, { fresh: true })}>Sign in again</Button></Group>
          </Stack>
        </Alert>
      ) : <ErrorAlert error={failure} />}

      <Stack gap="xs">
        <Title order={4}>Authenticator app</Title>
        {totp ? <Text>In use since {formatTime(totp.enabled_at)}.</Text> : <Text>Not set up.</Text>}
        {enrolment ? (
          <Stack gap="xs" maw={420}>
            <Text size="sm">Scan this code with your authenticator app, or type the secret into it, then enter the code it shows.</Text>
            <Image src={qr} alt="QR code of the authenticator app's secret" w={220} h={220} id="totp-qr" />
            <CopyField label="Secret" value={enrolment.secret} />
            <TextInput label="Code from the app" value={code} onChange={(event) => setCode(event.currentTarget.value)} inputMode="numeric" autoComplete="one-time-code" maxLength={7} />
            <Group>
              <Button onClick={confirmTotp} loading={busy}>Confirm</Button>
              <Button variant="default" onClick={() => setEnrolment(undefined)}>Cancel</Button>
            </Group>
          </Stack>
        ) : (
          <Group>
            <Button variant={totp ? 'default' : 'filled'} onClick={startTotp} loading={busy}>{totp ? 'Replace the app' : 'Set up an authenticator app'}</Button>
            {totp && <ConfirmButton label="Remove the app" title="Remove the authenticator app?" message="Its codes stop working at once." onConfirm={() => change(() => unwrap(api.DELETE('/accounts/factors/totp')))} />}
          </Group>
        )}
      </Stack>

      <Stack gap="xs">
        <Title order={4}>Passkeys</Title>
        {passkeys.length > 0 ? (
          <Table withTableBorder id="passkeys">
            <Table.Thead><Table.Tr><Table.Th>Name</Table.Th><Table.Th>Kind</Table.Th><Table.Th>Added</Table.Th><Table.Th>Last used</Table.Th><Table.Th /></Table.Tr></Table.Thead>
            <Table.Tbody>
              {passkeys.map((passkey: Passkey) => (
                <Table.Tr key={passkey.id}>
                  <Table.Td>{passkey.name}</Table.Td>
                  <Table.Td>{passkey.synced ? 'Synced' : 'This device only'}</Table.Td>
                  <Table.Td>{formatTime(passkey.created_at)}</Table.Td>
                  <Table.Td>{passkey.last_used_at ? formatTime(passkey.last_used_at) : 'Never'}</Table.Td>
                  <Table.Td>
                    <ConfirmButton label="Remove" title={`Remove the passkey "${passkey.name}"?`} message="It can no longer sign you in." onConfirm={() => change(() => unwrap(api.DELETE('/accounts/factors/passkeys/{passkey_id}', { params: { path: { passkey_id: passkey.id } } })))} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        ) : <Text>None yet.</Text>}
        <Group align="flex-end">
          <TextInput label="Name of the new passkey" placeholder="e.g. Work laptop" value={passkeyName} onChange={(event) => setPasskeyName(event.currentTarget.value)} maxLength={100} />
          <Button onClick={addPasskey} loading={busy}>Add a passkey</Button>
        </Group>
      </Stack>

      <Stack gap="xs">
        <Title order={4}>Recovery codes</Title>
        {recovery ? <Text>{recovery.remaining} of {recovery.total} left, made {formatTime(recovery.created_at)}.</Text> : <Text>They come with your first second factor.</Text>}
        {hasFactor && (
          <Group>
            <ConfirmButton label="Make new codes" color="blue" title="Make new recovery codes?" message="The codes you have now stop working." onConfirm={() => change(async () => setCodes((await unwrap(api.POST('/accounts/factors/recovery-codes', { body: {} }))).recovery_codes))} />
          </Group>
        )}
      </Stack>
      <RecoveryCodesShown codes={codes} onClose={() => setCodes(undefined)} />
    </Stack>
  );
}
