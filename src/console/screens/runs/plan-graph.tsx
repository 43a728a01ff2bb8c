import type { PlanNodeView } from '../chat/transcript';

/**
 * A DAG plan as a graph (DESIGN §17): nodes in layers top to bottom (a node sits one layer below
 * the deepest node it depends on), an arrow per dependency, each node coloured by its state.
 * The SVG scales to its box; the list beside it says the same in words.
 */
const NODE_W = 120;
const NODE_H = 48;
const GAP_X = 24;
const GAP_Y = 44;
const PAD = 8;

export function layersOf(nodes: PlanNodeView[]): Map<string, number> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const layer = new Map<string, number>();
  const depth = (id: string, seen: Set<string>): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    // A dependency on an unknown node, or a cycle, counts as none (the plan was checked by the worker).
    if (!node || seen.has(id)) return 0;
    seen.add(id);
    const deps = node.dependsOn.filter((dep) => byId.has(dep));
    const value = deps.length ? Math.max(...deps.map((dep) => depth(dep, seen) + 1)) : 0;
    layer.set(id, value);
    return value;
  };
  for (const node of nodes) depth(node.id, new Set());
  return layer;
}

interface Placed {
  node: PlanNodeView;
  x: number;
  y: number;
}

function place(nodes: PlanNodeView[]): { placed: Map<string, Placed>; width: number; height: number } {
  const layers = layersOf(nodes);
  const rows: PlanNodeView[][] = [];
  for (const node of nodes) (rows[layers.get(node.id) ?? 0] ??= []).push(node);
  const widest = Math.max(1, ...rows.map((row) => row?.length ?? 0));
  const width = widest * NODE_W + (widest - 1) * GAP_X + 2 * PAD;
  const placed = new Map<string, Placed>();
  rows.forEach((row, r) => {
    const rowWidth = row.length * NODE_W + (row.length - 1) * GAP_X;
    const left = (width - rowWidth) / 2;
    row.forEach((node, i) => placed.set(node.id, { node, x: left + i * (NODE_W + GAP_X), y: PAD + r * (NODE_H + GAP_Y) }));
  });
  return { placed, width, height: rows.length * NODE_H + (rows.length - 1) * GAP_Y + 2 * PAD };
}

const clip = (text: string, room: number) => (text.length > room ? `${text.slice(0, room - 1)}…` : text);

export function PlanGraph({ nodes }: { nodes: PlanNodeView[] }) {
  if (nodes.length === 0) return <p class="muted">The plan has no nodes.</p>;
  const { placed, width, height } = place(nodes);
  const counts = nodes.reduce<Record<string, number>>((all, node) => ({ ...all, [node.state]: (all[node.state] ?? 0) + 1 }), {});
  const summary = Object.entries(counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
  return (
    <figure class="plan-graph">
      <svg viewBox={`0 0 ${width} ${height}`} style={{ maxWidth: `${width}px` }} role="img" aria-label={`Plan graph: ${nodes.length} nodes (${summary})`}>
        <defs>
          <marker id="plan-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="plan-arrow" />
          </marker>
        </defs>
        {[...placed.values()].flatMap(({ node, x, y }) =>
          node.dependsOn.flatMap((dep) => {
            const from = placed.get(dep);
            if (!from) return [];
            const [x1, y1, x2, y2] = [from.x + NODE_W / 2, from.y + NODE_H, x + NODE_W / 2, y];
            const mid = (y1 + y2) / 2;
            return [<path key={`${dep}->${node.id}`} class="plan-edge" data-edge={`${dep}->${node.id}`} d={`M ${x1} ${y1} C ${x1} ${mid}, ${x2} ${mid}, ${x2} ${y2 - 2}`} marker-end="url(#plan-arrow)" />];
          }),
        )}
        {[...placed.values()].map(({ node, x, y }) => (
          <g key={node.id} class={`plan-node state-${node.state}`} data-node={node.id} data-state={node.state} transform={`translate(${x} ${y})`}>
            <title>{`${node.id} (${node.state}): ${node.task}`}</title>
            <rect width={NODE_W} height={NODE_H} rx="6" />
            <text x={NODE_W / 2} y="19" text-anchor="middle" class="plan-node-id">
              {clip(node.id, 16)}
            </text>
            <text x={NODE_W / 2} y="37" text-anchor="middle" class="plan-node-state">
              {node.state}
            </text>
          </g>
        ))}
      </svg>
      <figcaption class="muted small">{summary}</figcaption>
    </figure>
  );
}
