// `atrium agents …` (declared in src/cli/groups.ts).
import { parse } from 'yaml';
import { unwrap } from '../../api-client/client.ts';
import { arg, need, readText, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

/** An agent's configuration from --file: a YAML or JSON object. */
function configuration(ctx: Context): Record<string, unknown> {
  const path = need(ctx, 'file');
  let value: unknown;
  try {
    value = parse(readText(path));
  } catch (error) {
    throw new UsageError(`${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${path} must hold an object (the agent's configuration)`);
  return value as Record<string, unknown>;
}

/** The configuration with the agent's name where the API reads it (metadata.name). */
const named = (config: Record<string, unknown>, name: string) => ({ ...config, metadata: { ...(config.metadata as Record<string, unknown> | undefined), name } });

const byName = async (ctx: Context) => {
  const project_id = await ctx.project();
  return { project_id, agent: await unwrap(ctx.api.GET('/accounts/projects/{project_id}/agents/{agent_name}', { params: { path: { project_id, agent_name: arg(ctx, 0, '<name>') } } })) };
};

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/agents', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.agents, columns: ['id', 'name', 'created_at'], data: body };
  },
  async show(ctx) {
    return { record: (await byName(ctx)).agent };
  },
  async create(ctx) {
    const config = named(configuration(ctx), arg(ctx, 0, '<name>'));
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/agents', { params: { path: { project_id: await ctx.project() } }, body: { configuration: config } as never })) };
  },
  async update(ctx) {
    const config = configuration(ctx);
    const { project_id, agent } = await byName(ctx);
    return { record: await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/agents/{agent_id}', { params: { path: { project_id, agent_id: agent.id } }, body: { configuration: named(config, agent.name) } as never })) };
  },
  async delete(ctx) {
    const { project_id, agent } = await byName(ctx);
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/agents/{agent_id}', { params: { path: { project_id, agent_id: agent.id } } }));
    return { message: `Deleted agent ${agent.name}` };
  },
  async connect(ctx) {
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/agents/{agent_name}/connect', { params: { path: { project_id: await ctx.project(), agent_name: arg(ctx, 0, '<name>') } }, body: {} as never })) };
  },
} satisfies Implementations;
