// Type declarations for the parts of oidc-provider 9 that Atrium uses. The package ships no types
// and @types/oidc-provider lags the library, so only what src/oauth calls is declared here.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type AdapterPayload = Record<string, unknown> & {
    grantId?: string;
    accountId?: string;
    uid?: string;
    userCode?: string;
    consumed?: number;
  };

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface ClientMetadata {
    client_id: string;
    [key: string]: unknown;
  }

  export interface Client {
    clientId: string;
    clientName?: string;
    clientSecret?: string;
    clientAuthMethod: string;
    applicationType: string;
    redirectUris: string[];
    scope?: string;
    logoUri?: string;
    grantTypeAllowed(type: string): boolean;
    compareClientSecret(actual: string): Promise<boolean>;
    [key: string]: unknown;
  }

  export interface ClientStatic {
    find(id: string): Promise<Client | undefined>;
    prototype: Client;
  }

  export interface Grant {
    accountId?: string;
    clientId?: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(ttl?: number): Promise<string>;
  }

  export interface GrantStatic {
    new (properties: { accountId: string; clientId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }

  export interface InteractionPrompt {
    name: string;
    reasons: string[];
    details: {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      [key: string]: unknown;
    };
  }

  export interface Interaction {
    uid: string;
    jti: string;
    returnTo: string;
    exp: number;
    prompt: InteractionPrompt;
    params: Record<string, string | undefined>;
    session?: { accountId?: string; uid?: string; [key: string]: unknown };
    grantId?: string;
    result?: Record<string, unknown>;
    lastSubmission?: Record<string, unknown>;
    save(ttl: number): Promise<string>;
  }

  export interface InteractionStatic {
    find(id: string): Promise<Interaction | undefined>;
  }

  /** A pending device authorization (RFC 8628), found by the code the user enters. */
  export interface DeviceCode {
    clientId: string;
    isExpired: boolean;
    /** Set once the user denied (or the request was aborted). */
    error?: string;
    /** Set once a user approved. */
    accountId?: string;
    /** Set while a user is signing in to approve it. */
    inFlight?: boolean;
  }

  export interface DeviceCodeStatic {
    /** By the normalized code (upper case, no separators); undefined when unknown or tampered with. */
    findByUserCode(userCode: string, options?: { ignoreExpiration?: boolean }): Promise<DeviceCode | undefined>;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string, claims: unknown, rejected: string[]): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  /** The browser session the library keeps (only what we use). */
  export interface Session {
    /** Expiry in epoch seconds; absent until the session was first stored. */
    exp?: number;
    /** Whether the library stores the session when the request ends. */
    touched?: boolean;
    /** The account signed in to this browser session. */
    accountId?: string;
    /** The grant this session holds for a client. */
    grantIdFor(clientId: string): string | undefined;
  }

  /** The Koa context oidc-provider passes to configuration functions and middleware (only what we use). */
  export interface KoaContextWithOIDC {
    oidc: {
      provider: Provider;
      client?: Client;
      route?: string;
      params?: Record<string, unknown>;
      entities: Record<string, unknown>;
      session?: Session;
      urlFor(route: string): string;
      [key: string]: unknown;
    };
    req: IncomingMessage;
    res: ServerResponse;
    /** The client's address (through `proxyIpHeader`). */
    ip: string;
    /** The parsed query string; assigning `querystring` replaces it. */
    query: Record<string, string | string[] | undefined>;
    querystring: string;
    /** Set to false, Koa leaves the response alone. */
    respond?: boolean;
    body: unknown;
    type: string;
    status: number;
    path: string;
    method: string;
    host: string;
    [key: string]: unknown;
  }

  export type Configuration = Record<string, unknown>;

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    proxyIpHeader: string;
    Client: ClientStatic;
    Grant: GrantStatic;
    Interaction: InteractionStatic;
    DeviceCode: DeviceCodeStatic;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionResult(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
    on(event: 'server_error', listener: (ctx: KoaContextWithOIDC, error: Error) => void): this;
    on(event: string, listener: (...args: any[]) => void): this;
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this;
    /** The context of the request in flight (the library keeps it in an AsyncLocalStorage). */
    static readonly ctx: KoaContextWithOIDC | undefined;
  }

  export default Provider;

  export namespace interactionPolicy {
    class Check {
      constructor(reason: string, description: string, error: string, check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>);
      static REQUEST_PROMPT: true;
      static NO_NEED_TO_PROMPT: false;
    }
    interface Prompt {
      name: string;
      checks: Check[];
    }
    interface Policy extends Array<Prompt> {
      get(name: string): Prompt | undefined;
    }
    function base(): Policy;
  }

  export namespace errors {
    class OIDCProviderError extends Error {
      constructor(status: number, message: string);
      error: string;
      error_description?: string;
      status: number;
      statusCode: number;
    }
    class InvalidGrant extends OIDCProviderError { constructor(description?: string); }
    class InvalidTarget extends OIDCProviderError { constructor(description?: string); }
    class InvalidScope extends OIDCProviderError { constructor(description?: string, scope?: string); }
    class InvalidRequest extends OIDCProviderError { constructor(description?: string); }
    class AccessDenied extends OIDCProviderError { constructor(description?: string); }
    class SessionNotFound extends OIDCProviderError { constructor(description?: string); }
  }
}

declare module 'oidc-provider/lib/helpers/initialize_keystore.js' {
  import type { Provider } from 'oidc-provider';
  /** Replaces the provider's keystore (signing keys, the JWKS it publishes); `this` is the provider. */
  export default function initializeKeystore(this: Provider, jwks: { keys: unknown[] }): void;
}

declare module 'oidc-provider/lib/helpers/user_codes.js' {
  /** A user code as stored: upper case, without separators or spaces. */
  export function normalize(input: string): string;
  /** A normalized code in the display mask (`****-****`). */
  export function denormalize(normalized: string, mask: string): string;
}
