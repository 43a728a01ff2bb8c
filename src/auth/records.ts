import * as v from 'valibot';
import { count, described, instant, uuid } from '../shared/record-schemas.js';
import { BUDGET_PERIODS } from '../shared/budget-terms.js';
import { SCOPES } from './scopes.js';
import type { ApiKey, User } from '../db/models.js';
import type { TokenUsage } from '../shared/budget-terms.js';

/** DESIGN §18: the limits a key or a user carries, and its budget's use in the current period. */
const limitRecords = {
  rate_limit_rpm: described(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000))), 'Requests per minute; null: none of its own'),
  token_budget: described(
    v.nullable(v.strictObject({ limit: v.pipe(v.number(), v.integer(), v.minValue(1)), period: v.picklist(BUDGET_PERIODS) })),
    'Model tokens per UTC calendar day or month; null: none of its own',
  ),
  token_usage: described(
    v.nullable(v.strictObject({ used: count, period_start: instant, resets_at: instant })),
    "The budget's current period: tokens used so far, when it began and when it resets; null without a budget",
  ),
};

export const PublicUserSchema = v.strictObject({ id: uuid, email: v.string(), name: v.string(), role: v.picklist(['admin', 'member', 'restricted']), created_at: instant });
export type PublicUserRecord = v.InferOutput<typeof PublicUserSchema>;
export const AdminUserSchema = v.strictObject({ ...PublicUserSchema.entries, is_active: v.boolean(), ...limitRecords, updated_at: instant });
export type AdminUserRecord = v.InferOutput<typeof AdminUserSchema>;
export const TokenPairSchema = v.strictObject({
  access_token: described(v.string(), 'A JWT, valid for expires_in seconds'),
  refresh_token: described(v.string(), 'Single use: exchange it at POST /api/auth/refresh'),
  token_type: v.literal('bearer'),
  expires_in: count,
  user: PublicUserSchema,
});
export type TokenPairRecord = v.InferOutput<typeof TokenPairSchema>;
/** The spec's UserApiKeyInfo. */
export const ApiKeySchema = v.strictObject({
  id: uuid,
  name: v.string(),
  key_prefix: v.string(),
  scopes: described(v.nullable(v.string()), `Space-separated scopes (${SCOPES.join(', ')}); null: full access`),
  is_active: v.boolean(),
  expires_at: v.nullable(instant),
  last_used_at: v.nullable(instant),
  total_requests: count,
  ...limitRecords,
  created_at: instant,
});
export type ApiKeyRecord = v.InferOutput<typeof ApiKeySchema>;
export const AdminApiKeySchema = v.strictObject({ ...ApiKeySchema.entries, user_id: uuid });
export type AdminApiKeyRecord = v.InferOutput<typeof AdminApiKeySchema>;

/** The public view of a user; never includes the password hash. */
export function presentUser(user: User): PublicUserRecord {
  return { id: user.id, email: user.email, name: user.name, role: user.role, created_at: user.created_at.toISOString() };
}

/** The user as administrators see it, with its budget's use this period. */
export function presentAdminUser(user: User, token_usage: TokenUsage | null): AdminUserRecord {
  return {
    ...presentUser(user),
    is_active: user.is_active,
    rate_limit_rpm: user.rate_limit_rpm ?? null,
    token_budget: user.token_budget ?? null,
    token_usage,
    updated_at: user.updated_at.toISOString(),
  };
}

/** The spec's UserApiKeyInfo record, with its budget's use this period. */
export function presentApiKey(key: ApiKey, token_usage: TokenUsage | null): ApiKeyRecord {
  return {
    id: key.id,
    name: key.name,
    key_prefix: key.key_prefix,
    scopes: key.scopes,
    is_active: key.is_active,
    expires_at: key.expires_at?.toISOString() ?? null,
    last_used_at: key.last_used_at?.toISOString() ?? null,
    total_requests: key.total_requests,
    rate_limit_rpm: key.rate_limit_rpm ?? null,
    token_budget: key.token_budget ?? null,
    token_usage,
    created_at: key.created_at.toISOString(),
  };
}

/** A key as administrators see it: whose it is, too. */
export const presentAdminApiKey = (key: ApiKey, record: ApiKeyRecord): AdminApiKeyRecord => ({ ...record, user_id: key.user_id });
