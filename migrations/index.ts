import type { Knex } from 'knex';
import * as identity from './20261121_001_identity.js';
import * as runs from './20261121_002_runs.js';
import * as durableRuns from './20261121_003_durable_runs.js';
import * as knowledgeBases from './20261121_004_knowledge_bases.js';
import * as gatewayAgents from './20261121_005_gateway_agents.js';
import * as runPathIndexes from './20261122_006_run_path_indexes.js';
import * as connectors from './20261122_008_connectors.js';
import * as adminAudit from './20261122_009_admin_audit.js';
import * as webhooks from './20261122_010_webhooks.js';
import * as toolApproval from './20261122_011_tool_approval.js';
import * as realKnowledge from './20261125_012_real_knowledge.js';
import * as files from './20261125_013_files.js';
import * as clientSampling from './20261125_014_client_sampling.js';
import * as limits from './20261125_015_limits.js';
import * as modelPrices from './20261125_017_model_prices.js';
import * as traceIds from './20261125_018_trace_ids.js';
import * as schedules from './20261125_019_schedules.js';
import * as interruptedRuns from './20261125_020_interrupted_runs.js';
import * as agentVersions from './20261125_021_agent_versions.js';
import * as conversationLife from './20261125_022_conversation_life.js';
import * as contextWindows from './20261125_023_context_windows.js';
import * as usageSlots from './20261125_024_usage_slots.js';
import * as agentDefaultModel from './20261127_025_agent_default_model.js';
import * as keywordRanking from './20261128_026_keyword_ranking.js';
import * as structuredOutputs from './20261128_027_structured_outputs.js';
import * as clientTools from './20261128_028_client_tools.js';
import * as runIndexes from './20261128_029_run_indexes.js';
import * as evals from './20261128_030_evals.js';
import * as memories from './20261128_031_memories.js';
import * as memoryToolKeys from './20261128_032_memory_tool_keys.js';

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
  '20261122_006_run_path_indexes': runPathIndexes,
  '20261122_008_connectors': connectors,
  '20261122_009_admin_audit': adminAudit,
  '20261122_010_webhooks': webhooks,
  '20261122_011_tool_approval': toolApproval,
  '20261125_012_real_knowledge': realKnowledge,
  '20261125_013_files': files,
  '20261125_014_client_sampling': clientSampling,
  '20261125_015_limits': limits,
  '20261125_017_model_prices': modelPrices,
  '20261125_018_trace_ids': traceIds,
  '20261125_019_schedules': schedules,
  '20261125_020_interrupted_runs': interruptedRuns,
  '20261125_021_agent_versions': agentVersions,
  '20261125_022_conversation_life': conversationLife,
  '20261125_023_context_windows': contextWindows,
  '20261125_024_usage_slots': usageSlots,
  '20261127_025_agent_default_model': agentDefaultModel,
  '20261128_026_keyword_ranking': keywordRanking,
  '20261128_027_structured_outputs': structuredOutputs,
  '20261128_028_client_tools': clientTools,
  '20261128_029_run_indexes': runIndexes,
  '20261128_030_evals': evals,
  '20261128_031_memories': memories,
  '20261128_032_memory_tool_keys': memoryToolKeys,
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
