// What the typed secrets hold, checked before a value is sent: the SDKs read a `keys` secret as a
// JSON object of strings and a `docker` one as registry credentials in JSON, so a value that is
// neither would be stored and then fail where it is used. The console and the CLI share this.

/** Why `value` cannot be a secret of `type`, in words; undefined when it can (any other type holds anything). */
export function secretValueProblem(type: string, value: string): string | undefined {
  const kind = type.trim();
  if (kind !== 'keys' && kind !== 'docker') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  const fields = isObject ? parsed as Record<string, unknown> : {};
  if (kind === 'keys') {
    return isObject && Object.values(fields).every((v) => typeof v === 'string')
      ? undefined
      : 'A keys secret is a JSON object of strings, such as {"OPENAI_API_KEY": "sk-…"}';
  }
  return isObject && ['server', 'username', 'password'].every((field) => typeof fields[field] === 'string')
    ? undefined
    : 'A docker secret is registry credentials in JSON: {"server": "ghcr.io", "username": "…", "password": "…"} (email is optional)';
}
