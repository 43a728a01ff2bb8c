import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex.js';
import { MemoryStore } from '../src/memories/store.js';
import { MemoryService } from '../src/memories/service.js';
import { LocalEmbedder } from '../src/knowledge/embedders.js';
import { VectorStore } from '../src/knowledge/vector-store.js';
import { runTool, toolsFor } from '../workers/tools/registry.js';
import type { ToolContext } from '../workers/tools/tool.js';
import { createDatabase } from './support/database.js';

/**
 * DESIGN §28, effects once: `remember` writes one memory per tool call key (run id and call id).
 * An attempt that repeats the call after a crash (the memory written, the checkpoint not) gets the
 * memory written the first time, and MEMORIES_PER_USER's count counts it once.
 */
const PER_USER = 3;
const AGENT = '11111111-1111-4111-8111-111111111111';
let knex: Knex;
let drop: () => Promise<void>;
let service: MemoryService;
beforeAll(async () => {
  const db = await createDatabase();
  knex = createKnex(db.url, { poolMax: 4 });
  drop = db.drop;
  const store = new MemoryStore(knex, new VectorStore(knex, { hnswMinVectors: 1, efSearch: 100, buildMemoryMb: 64 }), { perUser: PER_USER, efSearch: 100 });
  service = new MemoryService(knex, store, new LocalEmbedder(), { perUser: PER_USER, recallK: 3 });
});
afterAll(async () => {
  await knex?.destroy();
  await drop?.();
});

async function newUser(): Promise<string> {
  const [user] = await knex('users').insert({ email: `once-${Math.random()}@t.test`, password_hash: 'x' }).returning('id');
  return (user as { id: string }).id;
}

/** The remember tool as a run's attempt calls it: the run's memory, and the call's key. */
function remember(userId: string, callKey: string, content: string) {
  const context: ToolContext = {
    signal: new AbortController().signal,
    now: () => new Date(),
    searchKnowledge: async () => [],
    memory: { remember: (text, key) => service.remember(userId, AGENT, text, key ?? null), recall: (query) => service.recall(userId, AGENT, query) },
    callKey,
  };
  return runTool(toolsFor(['remember']), { id: 'call_remember', name: 'remember', arguments: { content } }, context);
}

const stored = async (userId: string) => ({
  memories: Number((await knex('memories').where({ user_id: userId }).count('* as n').first())!.n),
  counted: (await knex('memory_counts').where({ user_id: userId }).first())?.count ?? 0,
});

describe('remember, once per tool call', () => {
  it('the same run and call twice (a retried attempt) stores one memory, counts one, and answers it both times', async () => {
    const user = await newUser();
    const first = await remember(user, 'run-1/call_remember', 'I like green tea');
    const again = await remember(user, 'run-1/call_remember', 'I like green tea');
    expect(first.isError).toBe(false);
    expect(again).toEqual(first);
    expect(await stored(user)).toEqual({ memories: 1, counted: 1 });
  });

  it('racing attempts of one call write once; other calls each write their own', async () => {
    const user = await newUser();
    const raced = await Promise.all(Array.from({ length: 4 }, () => remember(user, 'run-2/call_a', 'My cat is called Miso')));
    expect(new Set(raced.map((r) => (r.output as { id: string }).id)).size).toBe(1);
    await remember(user, 'run-2/call_b', 'My dog is called Rex');
    expect(await stored(user)).toEqual({ memories: 2, counted: 2 });
  });

  it('a repeated call is answered with its memory even when the user has no room left', async () => {
    const user = await newUser();
    const written = await remember(user, 'run-3/call_a', 'fact one');
    await remember(user, 'run-3/call_b', 'fact two');
    await remember(user, 'run-3/call_c', 'fact three');
    expect((await remember(user, 'run-3/call_d', 'fact four')).isError).toBe(true);
    expect(await remember(user, 'run-3/call_a', 'fact one')).toEqual(written);
    expect(await stored(user)).toEqual({ memories: PER_USER, counted: PER_USER });
  });
});
