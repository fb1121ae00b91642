// DNS names as the API accepts them (route domains, mail domains): lower-case letters, digits and
// hyphens in dot-separated labels of 1–63 characters, none starting or ending with a hyphen, at
// most 253 characters, and not an IP address (the last label is not all digits).
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';

export const DNS_NAME_PATTERN = `^(?=.{1,253}$)(?:${LABEL}\\.)*(?=[a-z0-9-]*[a-z-])${LABEL}$`;

const DNS_NAME = new RegExp(DNS_NAME_PATTERN);

export function isDnsName(name: string): boolean {
  return DNS_NAME.test(name);
}
