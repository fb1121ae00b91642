// User profiles: `GET|PUT /accounts/profiles/{user_id}`, with `me` for the caller.
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import type { Api } from '../../module.ts';
import { Ok, OK } from '../../platform/http/schemas.ts';
import { callerOf } from '../../platform/http/auth.ts';
import { Profile, ProfileUpdate, profileOf } from './schema.ts';
import { readableProfile, updateOwnProfile } from './service.ts';

const Params = Type.Object({ user_id: Type.String({ maxLength: 64, description: 'A user id, or `me`' }) });

export function userRoutes(app: Api, ctx: AppContext): void {
  app.get('/accounts/profiles/:user_id', {
    config: { auth: { permission: 'authenticated', credentials: ['api_key', 'user', 'oauth'], oauthScope: 'profile:read' } },
    schema: { tags: ['Profiles'], summary: 'Fetch a user profile (`me` for the caller)', params: Params, response: { 200: Profile } },
  }, async (request) => profileOf(await readableProfile(ctx, callerOf(request), request.params.user_id)));

  app.put('/accounts/profiles/:user_id', {
    config: { auth: { permission: 'authenticated', credentials: ['user'] } },
    schema: { tags: ['Profiles'], summary: 'Update your own profile', params: Params, body: ProfileUpdate, response: { 200: Ok } },
  }, async (request) => {
    await updateOwnProfile(ctx, callerOf(request), request.params.user_id, request.body);
    return OK;
  });
}
