import { randomUUID } from 'node:crypto';
import type { RunRef } from '../../src/engine/protocol-types.js';
import { runProtocol, type RunProtocol } from '../../src/engine/run-protocol.js';
import { decodeOutcome, ScriptOutcomes, type OutcomeScript } from '../../src/engine/script-outcomes.js';
import type { RunEvent } from '../../src/engine/transitions.js';
import type { RedisKeys } from '../../src/shared/redis-keys.js';
import type { RedisClient } from '../../src/shared/redis-scripts.js';

/** A script's answer as its named outcome, seen while a scenario ran. */
export interface Observed {
  script: OutcomeScript;
  outcome: string;
}

/**
 * The connection with every outcome-naming script wrapped: each answer is decoded (the first
 * element of an array reply) and recorded. Pipelines (AttemptHold.take) are not recorded.
 */
export function recordingRedis<R extends RedisClient>(redis: R, observed: Observed[]): R {
  return new Proxy(redis, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !(property in ScriptOutcomes) || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      const script = property as OutcomeScript;
      return async (...args: unknown[]) => {
        const answer = await value.apply(target, args);
        observed.push({ script, outcome: decodeOutcome(script, Array.isArray(answer) ? answer[0] : answer) as string });
        return answer;
      };
    },
  });
}

/** `lease` records what its scripts answer; `setup` (same keys) prepares the state unrecorded. */
export interface Leases {
  lease: RunProtocol;
  setup: RunProtocol;
}

/** A scenario drives the Redis side through the events of `path`; what its scripts answer must be what the table says of them. */
export interface Scenario {
  name: string;
  path: RunEvent[];
  drive(leases: Leases): Promise<void>;
}

const TTL = 60;
const conversation = () => {
  const userId = randomUUID();
  const conversationId = randomUUID();
  return () => ({ id: randomUUID(), conversationId, userId }) satisfies RunRef;
};
const announced = (run: RunRef) => ({ run_id: run.id, conversation_id: run.conversationId, agent_id: null, mode: 'react' as const, status: 'queued' as const });
const claim = (lease: RunProtocol, run: RunRef, strategy: 'reject' | 'enqueue' | 'interrupt' | 'rollback' = 'reject') => lease.admission.claim(run, announced(run), 100, strategy);

/** A run that holds its conversation, taken by attempt 1. */
async function running(setup: RunProtocol, runOf: () => RunRef): Promise<RunRef> {
  const run = runOf();
  await claim(setup, run);
  await setup.hold.take(run, 1);
  return run;
}

async function parked(setup: RunProtocol, lease: RunProtocol, kind: 'approval' | 'client'): Promise<RunRef> {
  const run = await running(setup, conversation());
  await setup.signals.requestApprovals(run, '1', ['call'], Date.now() + 60_000, TTL, kind);
  await lease.signals.park(run, TTL);
  return run;
}

async function stoppedByNewer(strategy: 'interrupt' | 'rollback', { lease, setup }: Leases): Promise<void> {
  const runOf = conversation();
  const run = await running(setup, runOf);
  await claim(lease, runOf(), strategy);
  if ((await setup.signals.stopKind(run)) !== strategy) throw new Error(`the stop kind is not ${strategy}`);
  await lease.hold.breakpoint(run);
  await lease.admission.release(run, '1');
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'a run claims a free conversation; a second run queues behind it',
    path: ['created'],
    async drive({ lease }) {
      const runOf = conversation();
      await claim(lease, runOf());
      await claim(lease, runOf(), 'enqueue');
    },
  },
  {
    name: 'the web undoes the claim of a run it could not queue',
    path: ['enqueue_failed'],
    async drive({ lease, setup }) {
      const run = conversation()();
      await claim(setup, run);
      await lease.admission.release(run);
    },
  },
  {
    name: 'a run succeeds and the run queued behind it is admitted',
    path: ['succeeded', 'started'],
    async drive({ lease, setup }) {
      const runOf = conversation();
      const first = await running(setup, runOf);
      const second = runOf();
      await claim(setup, second, 'enqueue');
      await lease.admission.finish(first, '1');
      await lease.admission.admit(second);
      await setup.hold.take(second, 1);
      await lease.hold.breakpoint(second);
    },
  },
  {
    name: 'a queued run cancelled while it waits starts only to end',
    path: ['started', 'cancelled'],
    async drive({ lease, setup }) {
      const runOf = conversation();
      await running(setup, runOf);
      const queued = runOf();
      await claim(setup, queued, 'enqueue');
      await lease.signals.cancel(queued);
      await lease.admission.admit(queued);
      await setup.hold.take(queued, 1);
      await lease.hold.breakpoint(queued);
      await lease.admission.release(queued, '1');
    },
  },
  {
    name: 'a running run is cancelled: its breakpoint and its finish see the cancel',
    path: ['cancelled'],
    async drive({ lease, setup }) {
      const run = await running(setup, conversation());
      await lease.signals.cancel(run);
      await lease.hold.breakpoint(run);
      await lease.admission.finish(run, '1');
      await lease.admission.release(run, '1');
    },
  },
  {
    name: 'a run fails while an inject waits, then once it is acknowledged',
    path: ['failed'],
    async drive({ lease, setup }) {
      const run = await running(setup, conversation());
      await setup.signals.inject(run.userId, run.conversationId, { message_id: randomUUID(), content: 'more' });
      await lease.admission.release(run, '1');
      await setup.hold.acknowledge(run, 1);
      await lease.admission.release(run, '1');
    },
  },
  { name: 'a newer run interrupts the running one', path: ['interrupted'], drive: (leases) => stoppedByNewer('interrupt', leases) },
  { name: 'a newer run rolls the running one back', path: ['rolled_back'], drive: (leases) => stoppedByNewer('rollback', leases) },
  {
    name: 'a run parks for approval and resumes once it is decided',
    path: ['parked_for_approval', 'resumed'],
    async drive({ lease, setup }) {
      const run = await parked(setup, lease, 'approval');
      await lease.signals.decide(run, 'call', { decision: 'approve' });
      await lease.signals.park(run, TTL);
      await setup.hold.take(run, 2);
      await lease.hold.breakpoint(run);
    },
  },
  {
    name: "a run parks for its client's tool outputs and resumes once they are in",
    path: ['parked_for_client_tools', 'resumed'],
    async drive({ lease, setup }) {
      const run = await parked(setup, lease, 'client');
      await lease.signals.recordToolOutputs(run, [{ call_id: 'call', output: 'done' }]);
      await setup.hold.take(run, 2);
      await lease.hold.breakpoint(run);
    },
  },
  {
    name: 'a parked run is cancelled: it resumes to end',
    path: ['parked_for_approval', 'resumed', 'cancelled'],
    async drive({ lease, setup }) {
      const run = await parked(setup, lease, 'approval');
      await lease.signals.cancel(run);
      await lease.signals.park(run, TTL);
      await setup.hold.take(run, 2);
      await lease.hold.breakpoint(run);
      await lease.admission.release(run, '2');
    },
  },
  {
    name: 'a newer attempt takes a running run over',
    path: ['superseded'],
    async drive({ lease, setup }) {
      const run = await running(setup, conversation());
      await setup.hold.take(run, 2);
      await lease.hold.breakpoint(run);
    },
  },
];

export function leasesOn(redis: RedisClient, keys: RedisKeys, observed: Observed[]): Leases {
  return { lease: runProtocol(recordingRedis(redis, observed), keys), setup: runProtocol(redis, keys) };
}
