import { Type } from 'typebox';
import { JsonObject, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import type { UserRow } from './store.ts';

export const Profile = Type.Object({
  id: Type.String(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
}, { $id: 'Profile' });

export const ProfileUpdate = Type.Object({
  first_name: Type.Optional(Type.String({ maxLength: 200 })),
  last_name: Type.Optional(Type.String({ maxLength: 200 })),
});

export const profileOf = (user: UserRow) => ({ id: user.id, email: user.email, first_name: user.firstName, last_name: user.lastName });

// --- second factors ---------------------------------------------------------------------------------

const RecoveryCodeList = Type.Array(Type.String(), { description: 'Recovery codes, shown this once: each signs in once in place of the second factor' });

export const Passkey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  synced: Type.Boolean({ description: 'Synced between devices by its provider (a multi-device credential; `amr` `swk`), rather than bound to one authenticator (`hwk`)' }),
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()]),
}, { $id: 'Passkey' });

export const Factors = Type.Object({
  second_factor: Type.Boolean({ description: 'Whether the account has a second factor (an authenticator app or a passkey)' }),
  totp: Type.Union([Type.Object({ enabled_at: Timestamp }), Type.Null()], { description: 'The authenticator app, when one is confirmed' }),
  passkeys: Type.Array(Passkey),
  recovery_codes: Type.Union([Type.Object({ remaining: Type.Integer(), total: Type.Integer(), created_at: Timestamp }), Type.Null()]),
});

export const TotpEnrolment = Type.Object({
  secret: Type.String({ description: 'The shared secret in base32, for typing into an authenticator app' }),
  otpauth_uri: Type.String({ description: 'The same as an `otpauth://` URI, for a QR code' }),
});

export const TotpConfirm = Type.Object({
  code: Type.String({ maxLength: 20, description: 'The code the authenticator app shows now', examples: ['123456'] }),
});

export const RecoveryCodes = Type.Object({ recovery_codes: Type.Union([RecoveryCodeList, Type.Null()], { description: 'New recovery codes when this is the account\'s first second factor; null otherwise' }) });
export const NewRecoveryCodes = Type.Object({ recovery_codes: RecoveryCodeList });

export const PasskeyOptions = JsonObject('`PublicKeyCredentialCreationOptionsJSON`: pass it to `navigator.credentials.create()` (e.g. through `startRegistration` of `@simplewebauthn/browser`) within 5 minutes');

export const PasskeyRegistration = Type.Object({
  name: Type.String({ maxLength: 100, description: 'A name to tell the passkey apart, e.g. the device', examples: ['Work laptop'] }),
  response: JsonObject('The `RegistrationResponseJSON` the browser answered with'),
});

export const PasskeyRegistered = Type.Object({ passkey: Passkey, recovery_codes: RecoveryCodes.properties.recovery_codes });

export const PasskeyRename = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) });

export const PasskeyParams = Type.Object({ passkey_id: Uuid });
