// The error of a service that cannot start as configured: a setting, or a stored key this version
// cannot use. The CLI prints its message alone, without a stack.
export class ConfigError extends Error {}
