#!/usr/bin/env node
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { loadConfigOrExit } from './config.js';
import { createLogger } from './logger.js';
import { createKnex } from './db/knex.js';
import { bindModels, type Role } from './db/models.js';
import { ensureDatabase, release } from './db/setup.js';
import { createUser, findUserByEmail } from './auth/users.js';
import { scopesField } from './auth/scopes.js';
import { createRedis } from './redis/connection.js';
import { buildIdentityServices } from './services.js';
import { PlatformClient, renderEvent } from './client.js';

const USAGE = `agentctl — operate agent-platform

  agentctl migrate
  agentctl users:create --email E --password P [--role admin|member|restricted] [--name N]
  agentctl keys:create --email E --name N [--scopes "chat kb"] [--expires-at ISO]
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
    await withDatabase(async ({ knex }) => {
      const user = await createUser(bindModels(knex), { email: values.email!, password: values.password!, role, name: values.name });
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
        const created = await services.apiKeys.create(user.id, { name: values.name!, scopes: scopes?.output ?? null, expires_at: expiresAt });
        console.log(`created key "${created.name}" (${created.key_prefix}…, scopes: ${created.scopes ?? 'full access'})`);
        console.log('Store it now; it is shown only once:');
        console.log(created.key);
      } finally {
        redis.disconnect();
      }
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
