import { Type } from 'typebox';
import type { UserRow } from './store.ts';

export const Profile = Type.Object({
  id: Type.String(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
}, { $id: 'Profile' });

export const ProfileUpdate = Type.Object({
  first_name: Type.Optional(Type.String({ maxLength: 200 })),
  last_name: Type.Optional(Type.String({ maxLength: 200 })),
});

export const profileOf = (user: UserRow) => ({ id: user.id, email: user.email, first_name: user.firstName, last_name: user.lastName });
