import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round } from './support.js';

/**
 * Reads the V8 CPU profiles `node --cpu-prof` wrote (one file per process, its pid in the name) and
 * prints where the time went: the top frames by self time, and the same time attributed to the
 * nearest frame of the platform's own code (dist/src, dist/workers), which is where a change can act.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const OWN_CODE = /\/dist\/(src|workers)\//;
const IDLE = '(idle)';

/**
 * The .cpuprofile files a process wrote on exit, main thread first: Node names them
 * CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile (worker threads, e.g. a piscina pool's, have their own).
 */
export function profilesOf(dir: string, pid: number): { thread: number; path: string }[] {
  return readdirSync(dir)
    .map((file) => ({ file, parts: file.split('.') }))
    .filter(({ file, parts }) => file.endsWith('.cpuprofile') && parts[3] === String(pid))
    .map(({ file, parts }) => ({ thread: Number(parts[4]), path: join(dir, file) }))
    .sort((a, b) => a.thread - b.thread);
}

/** Where a frame is, relative to the repository when it is ours or a dependency's. */
function frameLabel(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  const path = frame.url.replace(/^file:\/\//, '').replace(/^.*?\/(dist\/|node_modules\/)/, '$1');
  return `${name} ${path}:${frame.lineNumber + 1}`;
}

/** Each sample's duration in µs (the time to the next sample; the last gets the mean), by sampled node id. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const byNode = new Map<number, number>();
  const { samples, timeDeltas } = profile;
  const mean = timeDeltas.reduce((a, b) => a + b, 0) / Math.max(1, timeDeltas.length);
  samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (timeDeltas[i + 1] ?? mean)));
  return byNode;
}

/** For each node, the label of the nearest frame at or above it that `labelOf` names (undefined when none does). */
function nearest(profile: CpuProfile, labelOf: (frame: CallFrame) => string | undefined): Map<number, string | undefined> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const found = new Map<number, string | undefined>();
  const find = (id: number): string | undefined => {
    if (found.has(id)) return found.get(id);
    const up = parent.get(id);
    const label = labelOf(byId.get(id)!.callFrame) ?? (up === undefined ? undefined : find(up));
    found.set(id, label);
    return label;
  };
  for (const node of profile.nodes) find(node.id);
  return found;
}

const ownFrame = (frame: CallFrame) => (OWN_CODE.test(frame.url) ? frameLabel(frame) : undefined);
/** The dependency a frame belongs to (`node_modules/<package>`), for time with no frame of ours above it. */
const dependency = (frame: CallFrame) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(frame.url)?.[1];

type Row = { 'self ms': number; '% of busy': number };

/** Sums µs by label, largest first, as table rows of ms and share of the busy (non-idle) time. */
function top(times: Iterable<[string, number]>, busyUs: number, count: number): Record<string, Row> {
  const summed = new Map<string, number>();
  for (const [label, us] of times) summed.set(label, (summed.get(label) ?? 0) + us);
  const sorted = [...summed].sort((a, b) => b[1] - a[1]).slice(0, count);
  return Object.fromEntries(sorted.map(([label, us]) => [label, { 'self ms': round(us / 1000, 1), '% of busy': round((100 * us) / busyUs, 1) }]));
}

export function summarizeProfile(path: string, count = 15): { busyMs: number; bySelf: Record<string, Row>; byOwnFrame: Record<string, Row> } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const busy = [...selfTimes(profile)].filter(([id]) => byId.get(id)!.callFrame.functionName !== IDLE);
  const busyUs = busy.reduce((sum, [, us]) => sum + us, 0);
  const own = nearest(profile, ownFrame);
  const dependencies = nearest(profile, dependency);
  const bySelf = top(busy.map(([id, us]) => [frameLabel(byId.get(id)!.callFrame), us]), busyUs, count);
  const ownLabel = (id: number) => {
    const label = own.get(id);
    if (label) return label;
    // (program), (garbage collector) and the like stand for themselves; other time is named by its nearest dependency.
    const name = byId.get(id)!.callFrame.functionName;
    if (name.startsWith('(')) return name;
    const pkg = dependencies.get(id);
    return pkg ? `(none of ours) under ${pkg}` : '(none of ours) Node internals';
  };
  const byOwnFrame = top(busy.map(([id, us]) => [ownLabel(id), us]), busyUs, count);
  return { busyMs: busyUs / 1000, bySelf, byOwnFrame };
}

/** Prints both tables for each named process's main thread whose profile is in `dir`, and a line per other thread. */
export function printProfiles(dir: string, processes: Record<string, number>, count = 15): void {
  for (const [name, pid] of Object.entries(processes)) {
    const [main, ...threads] = profilesOf(dir, pid);
    if (!main) {
      console.log(`CPU profile of ${name} (pid ${pid}): no .cpuprofile in ${dir} (did it exit by SIGKILL?)`);
      continue;
    }
    const summary = summarizeProfile(main.path, count);
    console.log(`\nCPU profile of ${name}'s main thread (${main.path}), its whole life (start-up and every phase it served): ${round(summary.busyMs, 0)} ms busy (idle excluded); top ${count} by self time:`);
    console.table(summary.bySelf);
    console.log(`${name}: the same time attributed to the nearest frame of our own code (dist/src, dist/workers) on the stack, else to the nearest dependency's:`);
    console.table(summary.byOwnFrame);
    for (const thread of threads) {
      const t = summarizeProfile(thread.path, 3);
      const heaviest = Object.entries(t.byOwnFrame).map(([label, row]) => `${label} ${row['self ms']} ms`);
      console.log(`${name}, worker thread ${thread.thread}: ${round(t.busyMs, 0)} ms busy; by nearest own frame: ${heaviest.join('; ')}`);
    }
  }
}
