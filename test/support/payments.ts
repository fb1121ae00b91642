// The local payment provider (test cards, no money moved) for services of the tests on either
// engine: with DATABASE_URL the server refuses it unless allowed explicitly.
export const LOCAL_PAYMENTS_ENV = { ATRIUM_PAYMENT_PROVIDER: 'local', ATRIUM_PAYMENT_LOCAL_ALLOWED: 'true' } as const;
