// The HTTP surface of the sign-in pages: path parameters, form bodies and link queries, and the
// route schema of a page. Every field is bounded and is single-line text: no control character
// and no lone surrogate can come from our forms, and PostgreSQL could not store a NUL.
import { Type } from 'typebox';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH } from '../accounts.ts';
import { Html } from '../respond.ts';

const SINGLE_LINE = '^[^\\u0000-\\u001f\\u007f\\ud800-\\udfff]*$';
const Field = (max: number) => Type.Optional(Type.String({ maxLength: max, pattern: SINGLE_LINE, 'x-pattern-means': 'must be one line of text' }));

export const Uid = Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_-]{1,64}$', 'x-pattern-means': 'is not a sign-in flow id' });
export const FlowParams = Type.Object({ uid: Uid });
export const ProviderId = Type.String({ maxLength: 32, pattern: SINGLE_LINE, 'x-pattern-means': 'must be one line of text' });

const csrf = Field(200);
const email = Field(EMAIL_MAX_LENGTH + 50);
const password = Field(PASSWORD_MAX_LENGTH);
const token = Field(200);

export const CsrfOnly = Type.Object({ _csrf: csrf });
export const EmailForm = Type.Object({ _csrf: csrf, email });
export const PasswordForm = Type.Object({ _csrf: csrf, email, password });
export const CodeForm = Type.Object({ _csrf: csrf, email, code: Field(20) });
export const SignupForm = Type.Object({ _csrf: csrf, email, password, first_name: Field(200), last_name: Field(200) });
export const TokenForm = Type.Object({ _csrf: csrf, token });
export const ResetForm = Type.Object({ _csrf: csrf, token, password });
export const FactorCodeForm = Type.Object({ _csrf: csrf, code: Field(40) });
export const PasskeyForm = Type.Object({ _csrf: csrf, response: Field(8000) });
/** `PublicKeyCredentialRequestOptionsJSON` for the page's script. */
export const PasskeyOptions = Type.Record(Type.String(), Type.Unknown(), { description: 'WebAuthn request options (JSON) for navigator.credentials.get()' });
export const ConsentForm = Type.Object({ _csrf: csrf, decision: Type.Optional(Type.Enum(['allow', 'deny'])) });
export const NoticeQuery = Type.Object({ notice: Field(50) });
export const TokenQuery = Type.Object({ token: Type.String({ maxLength: 200, pattern: SINGLE_LINE, 'x-pattern-means': 'must be one line of text' }) });
export const UpstreamCallbackQuery = Type.Object({ code: Field(2000), state: Field(2000), iss: Field(2000), error: Field(200), error_description: Field(2000) });

/** Common parts of a page's schema: hidden from the API reference; answers are HTML. */
export const PAGE = { tags: ['Sign-in pages'], hide: true } as const;
export const PAGE_ANSWERS = { 200: Html, '4xx': Html };
