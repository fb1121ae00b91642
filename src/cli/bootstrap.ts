// `atrium bootstrap`: the first admin, their project and fresh credentials, idempotently.
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { openHost } from './host.ts';

export interface BootstrapInput {
  email: string;
  password: string;
  project: string;
  firstName?: string | undefined;
  lastName?: string | undefined;
}

export interface BootstrapResult {
  user_id: string;
  project_id: string;
  api_key: string;
  user_token: string;
}

export class BootstrapError extends Error {}

export async function bootstrap(config: Config, input: BootstrapInput): Promise<BootstrapResult> {
  const [ctx, { createApiKey }, { createProject, findProjectByOwnerAndName }, { createUser, findUserByEmail, issuePersonalAccessToken, passwordMatches }] = await Promise.all([
    openHost(config), import('../modules/api-keys/service.ts'), import('../modules/projects/service.ts'), import('../modules/users/service.ts'),
  ]);
  try {
    let user = await findUserByEmail(ctx.db, input.email);
    if (user && !(await passwordMatches(user, input.password))) {
      throw new BootstrapError(`A user ${input.email} already exists with a different password`);
    }
    user ??= await createUser(ctx.db, { email: input.email, password: input.password, firstName: input.firstName, lastName: input.lastName, emailVerified: true });
    const project = (await findProjectByOwnerAndName(ctx.db, user.id, input.project)) ?? (await createProject(ctx.db, user.id, input.project));
    const key = await createApiKey(ctx.db, ctx.secrets, project.id, { name: 'bootstrap', description: 'Created by atrium bootstrap', createdBy: user.id });
    const userToken = await issuePersonalAccessToken(ctx.db, user.id, 'bootstrap');
    return { user_id: user.id, project_id: project.id, api_key: key.value, user_token: userToken };
  } finally {
    await ctx.database.close();
  }
}

/** `atrium bootstrap --email E --password P --project NAME [--json]`. */
export async function bootstrapCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      project: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.email || !values.password || !values.project) {
    process.stderr.write('bootstrap needs --email, --password and --project\n');
    return 2;
  }
  let result: BootstrapResult;
  try {
    const { loadConfig } = await import('../config.ts');
    result = await bootstrap(loadConfig(), {
      email: values.email,
      password: values.password,
      project: values.project,
      firstName: values['first-name'],
      lastName: values['last-name'],
    });
  } catch (error) {
    if (!(error instanceof BootstrapError)) throw error;
    process.stderr.write(`atrium: ${error.message}\n`);
    return 2;
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(
      `Admin user:  ${values.email} (${result.user_id})\nProject:     ${values.project} (${result.project_id})\n` +
      `API key:     ${result.api_key}\nUser token:  ${result.user_token}\nStore both credentials now: they are not shown again.\n`,
    );
  }
  return 0;
}
