import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRITE_POINTS, type WritePoint } from '../../src/engine/write-points.js';
import { FINAL_STATUSES, PARKED_STATUSES, type RunEvent } from '../../src/engine/transitions.js';
import { BudgetLedger, type BudgetRef } from '../../src/budgets/ledger.js';
import { runRef } from '../../src/engine/web-engine.js';
import type { RunStatus } from '../../src/db/models.js';
import { Crash, CrashPlan, createStack, type PlanStep, type Stack, type WorkHooks } from './crash-support.js';

/**
 * DESIGN §28, crash-tested writes: for every write the transition table names (WRITE_POINTS), a
 * real run (the worker's RunExecutor, the local model, Postgres, Redis, BullMQ) whose attempt or
 * web is killed just before or just after it; recovery as production does it; then one final
 * status, a stream with every event once (`run` first, `done` last, the answer's tokens as a run
 * without a crash has them), usage counted once in the run's row, each model call charged to the
 * budget once (calls repeated after the last checkpoint were spent again: charged again), and the run's memory
 * (`remember`, a platform tool with a lasting effect) written once.
 */

type Kind = 'plain' | 'failing' | 'approval' | 'client' | 'cancel' | 'cancelParked' | 'unqueued' | 'unqueuedBehind' | 'queuedBehind' | 'rollback' | 'interrupt';

interface Case {
  kind: Kind;
  steps: PlanStep[];
  hooks?: WorkHooks;
}

const crashAt = (point: WritePoint): PlanStep => ({ point, crash: true });
const passing = (event: RunEvent, write: string, side: 'before' | 'after' = 'after'): PlanStep => ({ point: { event, write, side }, crash: false });

/** The run that carries out the point's event, and the plan that kills a process there. */
function caseOf(point: WritePoint): Case | undefined {
  const target = crashAt(point);
  switch (point.event) {
    case 'created':
    case 'started':
    case 'succeeded':
      // A run queued behind another is admitted once that one ends.
      return { kind: point.write === 'admitQueued' ? 'queuedBehind' : 'plain', steps: [target] };
    case 'superseded':
      // The first attempt dies just before its final row: the next one takes the running run over.
      return { kind: 'plain', steps: [crashAt({ event: 'succeeded', write: 'succeed', side: 'before' }), target] };
    case 'handed_back':
      return { kind: 'plain', steps: [target], hooks: { drainFirst: true } };
    case 'failed':
      return { kind: 'failing', steps: [target] };
    case 'parked_for_approval':
      return { kind: 'approval', steps: [target] };
    case 'parked_for_client_tools':
      return { kind: 'client', steps: [target] };
    case 'resumed':
      if (point.write === 'recordToolOutputs') return { kind: 'client', steps: [target] };
      if (point.write === 'requestCancel') return { kind: 'cancelParked', steps: [target] };
      if (point.write === 'decideApproval' || point.write === 'parkRun') return { kind: 'approval', steps: [target] };
      // The attempt that takes the parked run back.
      return { kind: 'approval', steps: [passing('parked_for_approval', 'parkRun'), target] };
    case 'cancelled':
      return { kind: 'cancel', steps: point.write === 'requestCancel' ? [target] : [passing('cancelled', 'requestCancel'), target] };
    case 'enqueue_failed':
      return { kind: point.write === 'LREM' ? 'unqueuedBehind' : 'unqueued', steps: [target] };
    case 'rolled_back':
    case 'interrupted': {
      // A newer run's claim (its web's) stops the running one; the running run's own claim passes first.
      const kind = point.event === 'rolled_back' ? 'rollback' : 'interrupt';
      const ownClaim = passing('created', 'claimConversation');
      return { kind, steps: point.write === 'claimConversation' ? [ownClaim, target] : [ownClaim, passing(point.event, 'claimConversation'), target] };
    }
    default:
      return undefined;
  }
}


let stack: Stack;
const reference = new Map<Kind, Outcome>();

beforeAll(async () => {
  stack = await createStack();
}, 60_000);
afterAll(() => stack?.close());

interface Outcome {
  status: RunStatus | 'none';
  /** rollback, interrupt: the newer run that stopped it ('none': its web died before its row). */
  newer: RunStatus | 'none';
  tokens: string;
  usage: unknown;
  charged: number;
  /** The tokens of the model calls the run's attempts made (a call made again by a later attempt counts again). */
  spent: number;
  memories: number;
}

/** An agent of the case's own (memories are kept per agent: no case recalls another's). */
async function agentOf(kind: Kind): Promise<string> {
  const fields = kind === 'failing' ? { max_iterations: 1 } : kind === 'approval' || kind === 'cancelParked' ? { tool_approval: 'always' } : {};
  const agent = await stack.models.Agent.query().insert({ user_id: stack.userId, name: 'crash', instructions: '', tools: [], knowledge_base_ids: [], connector_ids: [], gateway_tools: [], tool_approval: 'never', max_iterations: 8, memory: true, ...fields } as never);
  return agent.id;
}

/** What a case's run asks: a `remember` (its content unique to the run), and for `client` a client function. */
async function requestOf(kind: Kind, marker: string) {
  const agentId = await agentOf(kind);
  const remember = `Remember that crash marker ${marker} is green`;
  const budget: BudgetRef = { scope: 'key', id: randomUUID(), userId: stack.userId, limit: 1_000_000_000, period: 'day' };
  const base = { userId: stack.userId, mode: 'react' as const, budgets: [budget] };
  switch (kind) {
    case 'failing':
      return { ...base, query: remember, agentId };
    case 'approval':
    case 'cancelParked':
      return { ...base, query: remember, agentId };
    case 'client':
      return { ...base, query: `Remember that lookup_weather knows crash marker ${marker}`, agentId, clientTools: [{ name: 'lookup_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] };
    default:
      return { ...base, query: remember, agentId };
  }
}

/** Runs a case to its end; returns the run's id (none when its web died before its row) and what it left. */
async function play(kind: Kind, plan: CrashPlan, hooks: WorkHooks = {}): Promise<Outcome & { runId?: string; stream: { type: string; data: string }[] }> {
  const marker = randomUUID();
  const request = await requestOf(kind, marker);
  const web = stack.web(plan, { failAdds: kind === 'unqueued' || kind === 'unqueuedBehind' });
  let conversationId: string | undefined;
  if (kind === 'unqueuedBehind') {
    // A run parked for approval holds the conversation: this one queues behind it, and its job cannot be added.
    const holder = await stack.web(new CrashPlan([])).service.start(await requestOf('approval', randomUUID()));
    await stack.work(new CrashPlan([]));
    conversationId = holder.conversation_id;
  }
  stack.spent.tokens = 0;
  if (kind === 'queuedBehind') {
    // A run of the same agent and budget holds the conversation: this one queues behind it and is admitted when it ends.
    conversationId = (await stack.web(new CrashPlan([])).service.start({ ...request, query: 'Hello there' })).conversation_id;
  }
  let runId: string | undefined;
  let cancelled = false;
  const cancelOnce = async () => {
    if (cancelled || !runId) return;
    cancelled = true;
    const run = await stack.models.Run.query().findById(runId);
    await web.engine.cancel(run!).catch((err: unknown) => expect(err).toBeInstanceOf(Crash));
  };
  // rollback, interrupt: while the run works, a newer run of its conversation (the same agent and budget) stops it.
  let newerId: string | undefined;
  const startNewer = async () => {
    if (newerId !== undefined || !runId) return;
    newerId = '';
    const run = await stack.models.Run.query().findById(runId);
    const multitaskStrategy = kind === 'rollback' ? ('rollback' as const) : ('interrupt' as const);
    const newer = await web.service.start({ ...request, query: 'Hello there', conversationId: run!.conversation_id, multitaskStrategy }, (ref) => (newerId = ref.id)).catch(ignoreCrash);
    if (newer) newerId = newer.id;
  };
  const onRemember = kind === 'cancel' ? cancelOnce : kind === 'rollback' || kind === 'interrupt' ? startNewer : undefined;
  const workHooks: WorkHooks = { ...hooks, ...(onRemember ? { onRemember } : {}) };
  try {
    const run = await web.service.start({ ...request, ...(conversationId ? { conversationId, multitaskStrategy: 'enqueue' as const } : {}) }, (ref) => (runId = ref.id));
    runId = run.id;
  } catch (err) {
    if (!(err instanceof Crash) && !(kind === 'unqueued' || kind === 'unqueuedBehind')) throw err;
  }
  let answered = false;
  for (let round = 0; runId && round < 8; round++) {
    await stack.work(plan, workHooks);
    const row = await stack.models.Run.query().findById(runId);
    if (!row || FINAL_STATUSES.includes(row.status)) break;
    // Left queued without a job (its web died): what the workers' unqueued sweep finds.
    if (!PARKED_STATUSES.includes(row.status)) {
      if ((await stack.sweepUnqueued()) > 0) continue;
      break;
    }
    // The person or client answers; should the web die doing so, they ask another web. A web that died after
    // recording the answer, before waking the job, leaves it to the wake sweep.
    const answering = answered ? stack.web(new CrashPlan([])) : web;
    answered = true;
    if (kind === 'cancelParked') await answering.engine.cancel(row).catch(ignoreCrash);
    else if (row.status === 'waiting') await answering.service.decide(stack.userId, runId, 'call_remember', { decision: 'approve' }).catch(ignoreCrash);
    else await answering.service.submitToolOutputs(stack.userId, runId, row.required_action!.tool_calls.map((c) => ({ call_id: c.id, output: 'sunny' }))).catch(ignoreCrash);
    await stack.sweep();
  }
  const newer = newerId ? await finished(newerId, plan, workHooks) : 'none';
  return { runId, newer, ...(await outcomeOf(runId, marker, request.budgets[0]!)) };
}

/**
 * The newer run to its end. An attempt of the older run killed after its release never woke it:
 * it starts at its recheck, whose delay elapses at once here (the test is the clock).
 */
async function finished(runId: string, plan: CrashPlan, hooks: WorkHooks): Promise<RunStatus | 'none'> {
  for (let round = 0; round < 3; round++) {
    const row = await stack.models.Run.query().findById(runId);
    if (!row || FINAL_STATUSES.includes(row.status)) return row?.status ?? 'none';
    const job = await stack.queue.getJob(runId);
    if (job && (await job.isDelayed())) await job.promote();
    await stack.work(plan, hooks);
  }
  return (await stack.models.Run.query().findById(runId))!.status;
}

const ignoreCrash = (err: unknown) => {
  if (!(err instanceof Crash)) throw err;
};

async function outcomeOf(runId: string | undefined, marker: string, budget: BudgetRef) {
  const row = runId ? await stack.models.Run.query().findById(runId) : undefined;
  const stream = row ? await streamOf(runRef(row)) : [];
  const memories = Number((await stack.knex('memories').where({ user_id: stack.userId }).whereLike('content', `%${marker}%`).count('* as n').first())!.n);
  const charged = (await new BudgetLedger(stack.redis, stack.keys).usage(budget)).used;
  // The run's own marker is the one word its answer has that another case's has not.
  const tokens = stream.filter((e) => e.type === 'token').map((e) => (JSON.parse(e.data) as { text: string }).text).join('').replaceAll(marker, 'MARKER');
  return { status: row?.status ?? ('none' as const), tokens, usage: row?.usage ?? null, charged, spent: stack.spent.tokens, memories, stream };
}

async function streamOf(ref: { id: string; conversationId: string; userId: string }) {
  const entries = await stack.redis.xrange(stack.keys.runEvents(ref), '-', '+');
  return entries.map(([, fields]) => ({ type: fields[fields.indexOf('type') + 1]!, data: fields[fields.indexOf('data') + 1]! }));
}

async function referenceOf(kind: Kind): Promise<Outcome> {
  if (!reference.has(kind)) {
    const { status, newer, tokens, usage, charged, spent, memories } = await play(kind, new CrashPlan([]));
    reference.set(kind, { status, newer, tokens, usage, charged, spent, memories });
  }
  return reference.get(kind)!;
}

const name = (p: WritePoint) => `${p.event}: killed ${p.side} ${p.write}`;
const covered = WRITE_POINTS.filter((p) => caseOf(p));

describe('crash-tested writes (DESIGN §28)', () => {
  it('plays every write of the transition table (a write the table gains must be played here)', () => {
    expect(WRITE_POINTS.filter((p) => !caseOf(p)).map(name)).toEqual([]);
  });

  const cases = covered.map((p) => [name(p), p] as const);
  const playPoint = async (_: string, point: WritePoint) => {
    const { kind, steps, hooks } = caseOf(point)!;
    const plan = new CrashPlan(steps);
    const outcome = await play(kind, plan, hooks);
    expect(plan.done, `the run never reached ${name(point)}`).toBe(true);
    // A web killed before the cancel's write, or before the newer run's claim: nobody stopped the run.
    const unstopped = ['cancelled/requestCancel/before', 'rolled_back/claimConversation/before', 'interrupted/claimConversation/before'].some((p) => plan.crashed.includes(p));
    const expected = await referenceOf(unstopped ? 'plain' : kind);
    if (outcome.status === 'none') {
      // Its web died before the row: nothing of the run remains but expiring keys, and nobody was charged.
      expect(outcome.charged).toBe(0);
      expect(outcome.memories).toBe(0);
      return;
    }
    expect(FINAL_STATUSES).toContain(outcome.status);
    if (kind === 'unqueued' || kind === 'unqueuedBehind') {
      // Never queued: it ends failed, its stream discarded, having run nothing.
      expect(outcome).toMatchObject({ status: 'failed', stream: [], charged: 0, memories: 0 });
      return;
    }
    const types = outcome.stream.map((e) => e.type);
    expect(types[0]).toBe('run');
    expect(types.filter((t) => t === 'run')).toHaveLength(1);
    expect(types.filter((t) => t === 'done')).toHaveLength(1);
    expect(types.at(-1)).toBe('done');
    expect(outcome.status).toBe(expected.status);
    expect(outcome.tokens).toBe(expected.tokens);
    // The run's record counts its usage once: its row (what /api/admin/usage sums) is a clean run's.
    expect(outcome.usage).toEqual(expected.usage);
    // The budget bounds real spend: a call a later attempt made again was spent twice and is charged twice,
    // but no call is charged twice and none is left uncharged (the ledger is the sum of the calls made).
    expect(outcome.spent).toBeGreaterThan(0);
    expect(outcome.charged).toBe(outcome.spent);
    expect(expected.charged).toBe(expected.spent);
    expect(outcome.memories).toBe(expected.memories);
    // The newer run that stopped it runs to its end, unless its web died before its row.
    if (kind === 'rollback' || kind === 'interrupt') expect(outcome.newer).toBe(unstopped || plan.crashed.some((p) => p.endsWith('/claimConversation/after')) ? 'none' : 'succeeded');
  };
  it.each(cases)('%s', playPoint);
});

