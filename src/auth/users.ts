import type { Models, Role } from '../db/models.js';
import { hashPassword, type PasswordCost } from './passwords.js';

/** `passwordCost`: only for fixtures (tests, benchmarks); users created by requests get the default. */
export async function createUser(models: Models, input: { email: string; password: string; role?: Role; name?: string; passwordCost?: PasswordCost }) {
  return models.User.query().insertAndFetch({
    email: input.email,
    name: input.name ?? input.email.split('@')[0] ?? '',
    role: input.role ?? 'member',
    password_hash: await hashPassword(input.password, input.passwordCost),
  });
}

/** Emails match case-insensitively (the unique index is on lower(email)). */
export function findUserByEmail(models: Models, email: string) {
  return models.User.query().whereRaw('lower(email) = lower(?)', [email]).first();
}

export async function userCount(models: Models): Promise<number> {
  return models.User.query().resultSize();
}
