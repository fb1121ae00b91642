// Money as integers in micro-units of the currency (1 USD = 1,000,000 micros): stored and added as
// bigints, never floats. JSON shows decimal numbers; inputs are parsed from their decimal text.

export const MICROS = 1_000_000n;

/** Parses a decimal (number or string, at most 6 decimals) into micros; undefined if it is not one. */
export function toMicros(value: number | string): bigint | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? numberText(value) : '') : value.trim();
  const match = /^(-?)(\d{1,15})(?:\.(\d{1,6})0*)?$/.exec(text);
  if (!match) return undefined;
  const micros = BigInt(match[2]!) * MICROS + BigInt((match[3] ?? '').padEnd(6, '0'));
  return match[1] ? -micros : micros;
}

/** A number's decimal text without exponent notation (1e-7 → "0.0000001"). */
function numberText(value: number): string {
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** Micros as the decimal number JSON shows (exact up to 2^53 micros, about 9 billion units). */
export function fromMicros(micros: bigint | number | string): number {
  return Number(BigInt(micros)) / 1_000_000;
}

/** `quantity × price per million units`, in micros, rounded half up. */
export function costOf(quantity: bigint, pricePerMillionMicros: bigint): bigint {
  return (quantity * pricePerMillionMicros + 500_000n) / 1_000_000n;
}
