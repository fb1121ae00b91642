// A software authenticator for tests without a browser: answers a passkey registration's options
// (WebAuthn Level 3 §6.5, "none" attestation) with a fresh P-256 key, as a platform authenticator
// of one device would. The server verifies it with @simplewebauthn/server like a browser's answer.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The browser's answer (`PublicKeyCredential.toJSON()`) to registration options of `origin`. */
export function registrationAnswer(options: { challenge: string; rp: { id?: string } }, origin: string): Record<string, unknown> {
  const rpId = options.rp.id ?? new URL(origin).hostname;
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  // COSE_Key of an ES256 public key (RFC 9053): kty EC2, alg -7, crv P-256, x, y.
  const coseKey = isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
  const credentialId = randomBytes(16);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(credentialId.length);
  const authData = Buffer.concat([
    createHash('sha256').update(rpId).digest(),
    Buffer.from([0x45]), // user present, user verified, attested credential data
    Buffer.alloc(4), // signature counter
    Buffer.alloc(16), // AAGUID
    length, credentialId, coseKey,
  ]);
  const clientData = { type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false };
  return {
    id: b64url(credentialId),
    rawId: b64url(credentialId),
    type: 'public-key',
    response: {
      clientDataJSON: b64url(Buffer.from(JSON.stringify(clientData))),
      attestationObject: b64url(isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never)),
      transports: ['internal'],
    },
    clientExtensionResults: {},
  };
}
