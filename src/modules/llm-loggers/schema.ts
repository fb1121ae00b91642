import { Type } from 'typebox';
import { filterQuery, LimitOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { StringMap, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const MAX_FILTER_LENGTH = 4096;

export const Logger = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  destination_feed_id: Type.String(),
  filter_expression: Type.String(),
  paused: Type.Boolean(),
  annotations: StringMap,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const LoggerInput = Type.Object({
  destination_feed_id: Uuid,
  filter_expression: Type.String({ minLength: 1, maxLength: MAX_FILTER_LENGTH, description: 'A JMESPath expression over the call\'s event (docs/llm-proxy.md); a truthy result copies it. `` `true` `` copies every call.' }),
  paused: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
}, { examples: [{ destination_feed_id: '00000000-0000-4000-8000-000000000000', filter_expression: "provider == 'openai' && usage.output_tokens > `1000`" }] });

export const LoggerEnvelope = Type.Object({ logger: Logger });
export const LoggerList = ListOf('loggers', Logger);
export const LoggerListQuery = Type.Object({ ...LimitOffsetQuery, ...filterQuery('filter expression') });
export const LoggerParams = Type.Object({ project_id: Uuid, logger_id: Uuid });
