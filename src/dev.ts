#!/usr/bin/env node
/**
 * `npm start` for a local machine: migrate, create a first admin if there is no user, then run
 * web + one worker as child processes, their logs pretty-printed (LOG_FORMAT=json: JSON lines). Ctrl-C stops both.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit, type Config } from './config.js';
import { createLogger, prettyLineFormatter } from './logger.js';
import { createKnex } from './db/knex.js';
import { ensureDatabase, release } from './setup.js';
import { createRedis } from './redis/connection.js';
import { buildIdentityServices } from './services.js';
import { createUser, userCount } from './auth/users.js';

const config = loadConfigOrExit();

async function prepare(config: Config): Promise<void> {
  if (await ensureDatabase(config.databaseUrl)) console.log('created the database');
  const knex = createKnex(config.databaseUrl, { poolMax: 2 });
  const redis = createRedis(config.redis, 'patient', 'start');
  try {
    const services = buildIdentityServices({ config, knex, redis, logger: createLogger('silent', 'start') });
    const { applied } = await release(knex, services.models, config);
    if (applied.length) console.log(`applied ${applied.length} migration(s)`);
    if (config.nodeEnv !== 'production' && (await userCount(services.models)) === 0) {
      const email = 'admin@localhost';
      const password = randomBytes(12).toString('base64url');
      const admin = await createUser(services.models, { email, password, role: 'admin', name: 'Administrator' });
      const { key } = await services.apiKeys.create(admin.id, { name: 'first-boot' });
      const base = `http://localhost:${config.port}`;
      console.log(
        [
          '',
          'First boot: created an admin. This is shown once; store it now.',
          `  email:    ${email}`,
          `  password: ${password}`,
          `  API key:  ${key}`,
          '',
          'Try it:',
          `  open ${base}/console and sign in with the email and password above`,
          `  curl -s ${base}/api/auth/verify -H "Authorization: Bearer ${key}"`,
          `  AGENT_PLATFORM_URL=${base} AGENT_PLATFORM_API_KEY=${key} npx agentctl run "What is 12*7?"`,
          '',
        ].join('\n'),
      );
    }
  } finally {
    redis.disconnect();
    await knex.destroy();
  }
}

/** The children's JSON lines, human-readable, unless LOG_FORMAT=json (then kept as they are, for a log shipper). */
const pretty = config.logFormat === 'json' ? undefined : prettyLineFormatter();

/** Each line of a child's output as `[name] line` (a pretty entry's stack spans several lines: each gets the prefix); JSON lines as they are. */
function prefixed(name: string, line: string): string {
  const json = line.startsWith('{');
  // JSON lines already carry "name":"web"|"worker"; a prefix would break them for a log shipper.
  if (json && !pretty) return `${line}\n`;
  const text = json && pretty ? pretty(line) : line;
  return text
    .split('\n')
    .map((part) => `[${name}] ${part}\n`)
    .join('');
}

function run(name: string, script: string): ChildProcess {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Whole lines only, so two children's output never interleaves within a line.
  const relay = (from: NodeJS.ReadableStream, to: NodeJS.WritableStream) =>
    createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(prefixed(name, line)));
  relay(child.stdout!, process.stdout);
  relay(child.stderr!, process.stderr);
  return child;
}

await prepare(config);
const children = [run('web', './server.js'), run('worker', '../workers/main.js')];
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
for (const child of children) {
  child.on('exit', (code) => {
    if (!stopping) {
      console.error(`a child process exited (code ${code}); stopping the others`);
      process.exitCode = code ?? 1;
      stop();
    }
  });
}
