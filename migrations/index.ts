import type { Knex } from 'knex';
import * as identity from './20261121_001_identity.js';
import * as runs from './20261121_002_runs.js';
import * as durableRuns from './20261121_003_durable_runs.js';
import * as knowledgeBases from './20261121_004_knowledge_bases.js';
import * as gatewayAgents from './20261121_005_gateway_agents.js';

/**
 * Migrations are listed here rather than discovered on disk, so the same list runs from
 * compiled JavaScript, from vitest and from the release phase without loader tricks.
 * Add new ones at the end; never reorder or rename.
 */
const migrations: Record<string, Knex.Migration> = {
  '20261121_001_identity': identity,
  '20261121_002_runs': runs,
  '20261121_003_durable_runs': durableRuns,
  '20261121_004_knowledge_bases': knowledgeBases,
  '20261121_005_gateway_agents': gatewayAgents,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const migration = migrations[name];
    if (!migration) throw new Error(`Unknown migration ${name}`);
    return migration;
  },
};
