import type { Knex } from 'knex';
import { loadConfig } from './src/config.js';
import { knexConfig } from './src/db/knex.js';

/** For tools that expect a knexfile; the app itself builds its knex from Config (src/db/knex.ts). */
const config: Knex.Config = knexConfig(loadConfig().databaseUrl);
export default config;
