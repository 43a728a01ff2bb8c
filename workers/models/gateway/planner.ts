import * as v from 'valibot';
import { SYNTHESIS_NODE, type ChatMessage, type PlanNode } from '../types.js';
import { DEFAULT_DAG_MAX_NODES, limitTasks } from '../plan-limit.js';
import type { Attachment } from '../../../src/shared/attachments.js';

/** DAG planning on a gateway model: it is asked for sub-tasks as JSON; the synthesis node is added here. */

/** The most tasks the model is asked for; a plan is still bounded by DAG_MAX_NODES whatever it replies. */
const ASKED_TASKS = 8;
/** Longer replies are not plans worth reading (they fall back to one task). */
const MAX_REPLY_TASKS = 256;

const plannerPrompt = (maxTasks: number) => `You plan how to answer a question by splitting it into independent sub-tasks that can be worked on separately.
Reply with JSON only, no prose and no code fences, in exactly this shape:
{"tasks": [{"id": "t1", "task": "a self-contained sub-task", "depends_on": []}]}
Use at most ${maxTasks} tasks. A task may depend on earlier tasks by id. A simple question is one task.
Do not answer the question itself; the answers are combined afterwards.`;

const PlanReply = v.object({
  tasks: v.pipe(
    v.array(
      v.object({
        id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,40}$/)),
        task: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(2000)),
        depends_on: v.optional(v.array(v.string()), []),
      }),
    ),
    v.minLength(1),
    v.maxLength(MAX_REPLY_TASKS),
  ),
});

export const planMessages = (query: string, maxNodes = DEFAULT_DAG_MAX_NODES, images: Attachment[] = []): ChatMessage[] => [
  { role: 'system', content: plannerPrompt(Math.max(1, Math.min(ASKED_TASKS, maxNodes - 1))) },
  images.length > 0 ? { role: 'user', content: query, images } : { role: 'user', content: query },
];

function parseReply(text: string): v.InferOutput<typeof PlanReply> | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const parsed = v.safeParse(PlanReply, JSON.parse(text.slice(start, end + 1)));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The model's plan, made safe to run: unique ids, dependencies only on earlier tasks (so no
 * cycle), at most `maxNodes` nodes (the rest merged into the last task), and a synthesis node over
 * all of them. A reply that is not a plan makes the question itself the one task: the run goes on
 * rather than failing on the planner's formatting.
 */
export function readPlan(text: string, query: string, maxNodes = DEFAULT_DAG_MAX_NODES): PlanNode[] {
  const tasks = parseReply(text)?.tasks ?? [{ id: 't1', task: query, depends_on: [] }];
  const nodes: PlanNode[] = [];
  for (const task of tasks) {
    if (task.id === SYNTHESIS_NODE || nodes.some((n) => n.id === task.id)) continue;
    const earlier = new Set(nodes.map((n) => n.id));
    nodes.push({ id: task.id, task: task.task, depends_on: [...new Set(task.depends_on.filter((d) => earlier.has(d)))] });
  }
  const bounded = limitTasks(nodes, maxNodes);
  const synthesis = { id: SYNTHESIS_NODE, task: `Combine the answers to: ${query.trim()}`, depends_on: bounded.map((n) => n.id) };
  return [...bounded, synthesis];
}
