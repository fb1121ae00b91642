// Column types shared by every module's tables.
import { customType, timestamp } from 'drizzle-orm/pg-core';

/** Binary data (hashes, encrypted values) as a Buffer. */
export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => Buffer.from(value),
});

/** A `timestamptz` column read as a Date. */
export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
