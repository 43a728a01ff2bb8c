import type { PlanNode } from './types.js';

/** DAG_MAX_NODES' default: plans past it are merged, so one question cannot hold a run slot with hundreds of nodes. */
export const DEFAULT_DAG_MAX_NODES = 16;

/**
 * Bounds a plan's tasks so that with the synthesis node it has at most `maxNodes`: the tasks past the
 * limit are merged into the last one kept, whose task says how many it covers and lists them all.
 * Tasks depend only on earlier ones, so the merged node's dependencies are the kept tasks they named.
 */
export function limitTasks(tasks: PlanNode[], maxNodes: number): PlanNode[] {
  const room = Math.max(1, maxNodes - 1);
  if (tasks.length <= room) return tasks;
  const kept = tasks.slice(0, room - 1);
  const merged = tasks.slice(room - 1);
  const keptIds = new Set(kept.map((node) => node.id));
  const last: PlanNode = {
    id: merged[0]!.id,
    task: `${merged.length} sub-tasks merged into this one (plans are limited to ${maxNodes} nodes); answer each: ${merged.map((node) => node.task).join('; ')}`,
    depends_on: [...new Set(merged.flatMap((node) => node.depends_on).filter((id) => keptIds.has(id)))],
  };
  return [...kept, last];
}
