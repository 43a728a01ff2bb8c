import { Model, type Pojo } from 'objection';
import type { Knex } from 'knex';

export type Role = 'admin' | 'member' | 'restricted';

export class User extends Model {
  static override tableName = 'users';
  id!: string;
  email!: string;
  name!: string;
  role!: Role;
  password_hash!: string;
  created_at!: Date;
  updated_at!: Date;

  /** The public view of a user; never includes the password hash. */
  toPublic() {
    return { id: this.id, email: this.email, name: this.name, role: this.role, created_at: this.created_at.toISOString() };
  }
}

export class RefreshToken extends Model {
  static override tableName = 'refresh_tokens';
  id!: string;
  user_id!: string;
  family_id!: string;
  token_hash!: string;
  expires_at!: Date;
  used_at!: Date | null;
  revoked_at!: Date | null;
  created_at!: Date;
}

export class ApiKey extends Model {
  static override tableName = 'api_keys';
  id!: string;
  user_id!: string;
  name!: string;
  key_prefix!: string;
  key_hash!: string;
  scopes!: string | null;
  is_active!: boolean;
  expires_at!: Date | null;
  last_used_at!: Date | null;
  total_requests!: number;
  created_at!: Date;
  updated_at!: Date;

  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    // int8 arrives from pg as a string; request counts fit in a double.
    if (parsed.total_requests !== undefined) parsed.total_requests = Number(parsed.total_requests);
    return parsed;
  }

  /** The spec's UserApiKeyInfo record. */
  toInfo() {
    return {
      id: this.id,
      name: this.name,
      key_prefix: this.key_prefix,
      scopes: this.scopes,
      is_active: this.is_active,
      expires_at: this.expires_at?.toISOString() ?? null,
      last_used_at: this.last_used_at?.toISOString() ?? null,
      total_requests: this.total_requests,
      created_at: this.created_at.toISOString(),
    };
  }
}

/** Model classes bound to one knex instance; built once per process (or per test database). */
export function bindModels(knex: Knex) {
  return {
    User: User.bindKnex(knex),
    RefreshToken: RefreshToken.bindKnex(knex),
    ApiKey: ApiKey.bindKnex(knex),
  };
}
export type Models = ReturnType<typeof bindModels>;
