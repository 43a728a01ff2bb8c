#!/usr/bin/env node
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { loadConfigOrExit } from './config.js';
import { createLogger } from './logger.js';
import { createKnex } from './db/knex.js';
import { bindModels, type Role } from './db/models.js';
import { ensureDatabase, release } from './setup.js';
import { findUserByEmail } from './auth/users.js';
import { scopesField } from './auth/scopes.js';
import { createRedis } from './redis/connection.js';
import { buildIdentityServices } from './services.js';
import { PlatformClient, renderEvent } from './client.js';
import { Sealer } from './crypto/sealed.js';
import { rotateConnectorSecrets } from './connectors/secrets.js';
import { rotateWebhookSecrets } from './webhooks/service.js';
import { CLI_ACTOR } from './audit/log.js';
import { booleanText, instantText, uuidText } from './http/validation.js';

const USAGE = `agentctl — operate agent-platform

  agentctl migrate
  agentctl users:create --email E --password P [--role admin|member|restricted] [--name N]
  agentctl keys:create --email E --name N [--scopes "chat kb"] [--expires-at ISO]
  agentctl users:list [--q TEXT] [--role admin|member|restricted] [--active true|false] [--page N] [--size N]
  agentctl users:disable --email E | --id ID     refuse every credential of the user at once, cancel their runs
  agentctl users:enable --email E | --id ID
  agentctl keys:revoke --id ID | --prefix svc_XXXX   disable an API key everywhere at once
  agentctl audit [--actor ID] [--action A] [--target ID] [--from ISO] [--to ISO] [--limit N]   newest first
  agentctl secrets:rotate     re-seal connector and webhook secrets with ENCRYPTION_KEY (the old key in ENCRYPTION_KEY_PREVIOUS)
  agentctl run "question" [--mode react|dag] [--conversation ID] [--agent ID] [--url URL] [--key KEY]
  agentctl inject --conversation ID "text" [--url URL] [--key KEY]

run and inject read AGENT_PLATFORM_URL (default http://localhost:$PORT) and AGENT_PLATFORM_API_KEY.
`;

type Handler = (args: string[]) => Promise<void>;

function fail(message: string): never {
  process.stderr.write(`agentctl: ${message}\n`);
  process.exit(2);
}

async function withDatabase<T>(work: (ctx: { knex: ReturnType<typeof createKnex>; config: ReturnType<typeof loadConfigOrExit> }) => Promise<T>) {
  const config = loadConfigOrExit();
  const knex = createKnex(config.databaseUrl, { poolMax: 2 });
  try {
    return await work({ knex, config });
  } finally {
    await knex.destroy();
  }
}

/** Identity and admin services on the database and Redis (invalidations and run cancels reach every process). */
async function withIdentity<T>(work: (services: ReturnType<typeof buildIdentityServices>) => Promise<T>) {
  return withDatabase(async ({ knex, config }) => {
    const redis = createRedis(config.redis, 'patient', 'agentctl');
    try {
      return await work(buildIdentityServices({ config, knex, redis, logger: createLogger('silent', 'agentctl') }));
    } finally {
      redis.disconnect();
    }
  });
}

/** A flag's value checked with the API's own schema, or a clear failure naming the flag. */
function flag<S extends v.GenericSchema>(name: string, schema: S, value: string | undefined): v.InferOutput<S> | undefined {
  if (value === undefined) return undefined;
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) fail(`--${name}: ${parsed.issues[0].message}`);
  return parsed.output;
}

const positive = (name: string, value: string | undefined, fallback: number, max: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) fail(`--${name} must be a whole number from 1 to ${max}`);
  return n;
};

async function setUserActive(args: string[], active: boolean) {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, id: { type: 'string' } } });
  if (!values.email && !values.id) fail('needs --email or --id');
  const id = flag('id', uuidText, values.id);
  await withIdentity(async (services) => {
    const user = id ? await services.models.User.query().findById(id) : await findUserByEmail(services.models, values.email!);
    if (!user) fail(`no such user: ${values.email ?? values.id}`);
    const updated = await services.userAdmin.update(user.id, { is_active: active }, CLI_ACTOR);
    console.log(`${active ? 'enabled' : 'disabled'} ${updated.email} (${updated.id})`);
  });
}

const clientOptions = { url: { type: 'string' }, key: { type: 'string' } } as const;

function client(values: { url?: string; key?: string }): PlatformClient {
  const config = loadConfigOrExit();
  const key = values.key ?? config.client.apiKey;
  if (!key) fail('needs an API key: --key or AGENT_PLATFORM_API_KEY');
  return new PlatformClient((values.url ?? config.client.url).replace(/\/$/, ''), key);
}

const commands: Record<string, Handler> = {
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { ...clientOptions, mode: { type: 'string', default: 'react' }, conversation: { type: 'string' }, agent: { type: 'string' } },
    });
    const question = positionals.join(' ').trim();
    if (!question) fail('run needs a question');
    if (values.mode !== 'react' && values.mode !== 'dag') fail('--mode must be react or dag');
    let status = 'failed';
    await client(values).run(values.mode, { q: question, conversation_id: values.conversation ?? null, agent_id: values.agent ?? null }, (event) => {
      if (event.type === 'run') process.stderr.write(`run ${event.data.run_id} · conversation ${event.data.conversation_id}\n`);
      if (event.type === 'done') status = event.data.status;
      renderEvent(event, (text) => process.stdout.write(text));
    });
    process.exitCode = status === 'succeeded' ? 0 : 1;
  },

  async inject(args) {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { ...clientOptions, conversation: { type: 'string' } } });
    const text = positionals.join(' ').trim();
    if (!values.conversation || !text) fail('inject needs --conversation ID and the text');
    await client(values).inject(values.conversation, text);
    console.log('injected');
  },

  async migrate() {
    const config = loadConfigOrExit();
    if (await ensureDatabase(config.databaseUrl).catch(() => false)) console.log('created the database');
    await withDatabase(async ({ knex }) => {
      const { applied, adminCreated } = await release(knex, bindModels(knex), config);
      console.log(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'database is up to date');
      if (adminCreated) console.log(`created admin ${adminCreated} from ADMIN_EMAIL/ADMIN_PASSWORD`);
    });
  },

  async 'users:create'(args) {
    const { values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } } });
    if (!values.email || !values.password) fail('users:create needs --email and --password');
    if (values.password.length < 8) fail('--password must be at least 8 characters');
    const role = (values.role ?? 'member') as Role;
    if (!['admin', 'member', 'restricted'].includes(role)) fail('--role must be admin, member or restricted');
    await withIdentity(async (services) => {
      const user = await services.userAdmin.create({ email: values.email!, password: values.password!, role, name: values.name }, CLI_ACTOR);
      console.log(`created ${user.role} ${user.email} (${user.id})`);
    });
  },

  async 'keys:create'(args) {
    const { values } = parseArgs({ args, options: { email: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'expires-at': { type: 'string' } } });
    if (!values.email || !values.name) fail('keys:create needs --email and --name');
    const scopes = values.scopes === undefined ? null : v.safeParse(scopesField, values.scopes);
    if (scopes && !scopes.success) fail(`--scopes: ${scopes.issues[0].message}`);
    const expiresAt = values['expires-at'] ? new Date(values['expires-at']) : null;
    if (expiresAt && Number.isNaN(expiresAt.getTime())) fail('--expires-at must be an ISO date-time');
    await withDatabase(async ({ knex, config }) => {
      const redis = createRedis(config.redis, 'patient', 'agentctl');
      try {
        const services = buildIdentityServices({ config, knex, redis, logger: createLogger('silent', 'agentctl') });
        const user = await findUserByEmail(services.models, values.email!);
        if (!user) fail(`no user with email ${values.email}`);
        const created = await services.apiKeys.create(user.id, { name: values.name!, scopes: scopes?.output ?? null, expires_at: expiresAt }, null, CLI_ACTOR);
        console.log(`created key "${created.name}" (${created.key_prefix}…, scopes: ${created.scopes ?? 'full access'})`);
        console.log('Store it now; it is shown only once:');
        console.log(created.key);
      } finally {
        redis.disconnect();
      }
    });
  },

  async 'users:list'(args) {
    const { values } = parseArgs({ args, options: { q: { type: 'string' }, role: { type: 'string' }, active: { type: 'string' }, page: { type: 'string' }, size: { type: 'string' } } });
    if (values.role && !['admin', 'member', 'restricted'].includes(values.role)) fail('--role must be admin, member or restricted');
    const filters = { q: values.q, role: values.role as Role | undefined, is_active: flag('active', booleanText, values.active) };
    const page = { page: positive('page', values.page, 1, 1_000_000), size: positive('size', values.size, 50, 100) };
    await withIdentity(async (services) => {
      const { items, total, pages } = await services.userAdmin.list(filters, page);
      for (const u of items) console.log([u.id, u.email, u.role, u.is_active ? 'active' : 'disabled', u.created_at].join('\t'));
      console.log(`${total} user(s); page ${page.page} of ${Math.max(pages, 1)}`);
    });
  },

  'users:disable': (args) => setUserActive(args, false),
  'users:enable': (args) => setUserActive(args, true),

  async 'keys:revoke'(args) {
    const { values } = parseArgs({ args, options: { id: { type: 'string' }, prefix: { type: 'string' } } });
    if (!values.id && !values.prefix) fail('keys:revoke needs --id or --prefix');
    const id = flag('id', uuidText, values.id);
    await withIdentity(async (services) => {
      const matches = await services.models.ApiKey.query().where(id ? { id } : { key_prefix: values.prefix! }).limit(10);
      if (matches.length === 0) fail(`no API key with ${id ? `id ${id}` : `prefix ${values.prefix}`}`);
      if (matches.length > 1) fail(`${matches.length} keys share that prefix; pass --id:\n${matches.map((k) => `  ${k.id} ${k.name} (user ${k.user_id})`).join('\n')}`);
      const revoked = await services.apiKeys.update(null, matches[0]!.id, { is_active: false }, CLI_ACTOR);
      console.log(`revoked key "${revoked.name}" (${revoked.key_prefix}…, ${revoked.id})`);
    });
  },

  async audit(args) {
    const { values } = parseArgs({ args, options: { actor: { type: 'string' }, action: { type: 'string' }, target: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, limit: { type: 'string' } } });
    const filters = {
      actor_id: flag('actor', uuidText, values.actor),
      action: values.action,
      target_id: values.target,
      from: flag('from', instantText, values.from),
      to: flag('to', instantText, values.to),
    };
    const size = positive('limit', values.limit, 50, 100);
    await withIdentity(async (services) => {
      const { items, total } = await services.audit.list(filters, { page: 1, size });
      for (const e of items) {
        const who = `${e.actor_user_id ?? '-'}/${e.credential ?? '-'}`;
        console.log([e.at, e.action, who, `${e.target_type ?? '-'}:${e.target_id ?? '-'}`, e.ip ?? '-', JSON.stringify(e.details)].join('\t'));
      }
      console.log(`${items.length} of ${total} entr${total === 1 ? 'y' : 'ies'}`);
    });
  },

  async 'secrets:rotate'() {
    await withDatabase(async ({ knex, config }) => {
      const sealer = new Sealer(config.encryptionKey, config.encryptionKeyPrevious);
      const connectors = await rotateConnectorSecrets(knex, sealer);
      const webhooks = await rotateWebhookSecrets(knex, sealer);
      console.log(`checked ${connectors.checked} connector(s) and ${webhooks.checked} webhook(s); re-sealed ${connectors.resealed + webhooks.resealed} secret value(s) with the current ENCRYPTION_KEY`);
    });
  },
};

const [command, ...rest] = process.argv.slice(2);
const handler = command ? commands[command] : undefined;
if (!handler) {
  process.stdout.write(USAGE);
  process.exit(command && command !== 'help' && command !== '--help' ? 2 : 0);
}
try {
  await handler(rest);
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
