import type { Models, Role } from '../db/models.js';
import { hashPassword } from './passwords.js';

export async function createUser(models: Models, input: { email: string; password: string; role?: Role; name?: string }) {
  return models.User.query().insertAndFetch({
    email: input.email,
    name: input.name ?? input.email.split('@')[0] ?? '',
    role: input.role ?? 'member',
    password_hash: await hashPassword(input.password),
  });
}

/** Emails match case-insensitively (the unique index is on lower(email)). */
export function findUserByEmail(models: Models, email: string) {
  return models.User.query().whereRaw('lower(email) = lower(?)', [email]).first();
}

export async function userCount(models: Models): Promise<number> {
  return models.User.query().resultSize();
}
