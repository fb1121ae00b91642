-- What billing needs of a call beyond its usage: the model the caller asked for (priced when the
-- snapshot the provider answered with has no price), and the limits its reservation was worked out
-- from (the body's size, the output allowed per answer, the answers asked for), so that a call whose
-- usage never came is billed what it reserved. docs/llm-proxy.md "Usage records".
alter table llm_usage add column requested_model text;
alter table llm_usage add column request_bytes integer not null default 0;
alter table llm_usage add column max_output_tokens integer;
alter table llm_usage add column choices integer not null default 1;
