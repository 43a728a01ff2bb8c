import { Table, ErrorNotice } from '../../ui/parts';
import { useAction } from '../../ui/async';
import { Citations, Images } from '../../ui/attachments';
import type { PlanNodeView, RunItem, RunView } from './transcript';

export type Decide = (runId: string, callId: string, decision: 'approve' | 'reject') => Promise<void>;

/** One run as it streams: the question, its steps, the plan, the answer growing token by token, and how it ended. */
export function RunCard({ run, onDecide }: { run: RunView; onDecide: Decide }) {
  const waiting = run.status === 'waiting';
  return (
    <article class="run" aria-label={`Run ${run.runId || '(starting)'}`} data-run-id={run.runId} aria-busy={run.done ? 'false' : 'true'}>
      <div class="message user">
        <p class="who">You</p>
        <Images images={run.images} />
        <p class="text">{run.question}</p>
      </div>
      <div class="message assistant">
        <p class="who">
          Assistant <span class="mode">{run.mode === 'dag' ? 'DAG' : 'ReAct'}</span> <span class={`badge ${badgeClass(run.status)}`}>{run.status}</span>
        </p>
        {run.droppedItems > 0 && <p class="muted small">{run.droppedItems} earlier steps not shown.</p>}
        {run.plan && <PlanTable nodes={run.plan} />}
        {run.items.length > 0 && (
          <ol class="steps" aria-label="Steps">
            {run.items.map((item, i) => (
              <li key={i} class={`step step-${item.kind}`}>
                <Step item={item} runId={run.runId} waiting={waiting} onDecide={onDecide} />
              </li>
            ))}
          </ol>
        )}
        {(run.answer || run.streamed) && (
          <section class="answer" aria-label="Answer">
            <p class="text">{run.answer ? run.answer.content : run.streamed}</p>
            {run.answer && run.answer.finishReason !== 'stop' && <p class="muted small">Stopped: {run.answer.finishReason}</p>}
          </section>
        )}
        {run.answer && <Citations citations={run.answer.citations} />}
        {run.done && <DoneLine done={run.done} />}
      </div>
    </article>
  );
}

function badgeClass(status: string): string {
  if (status === 'succeeded') return 'succeeded';
  if (status === 'failed' || status === 'cancelled' || status === 'interrupted') return 'failed';
  return 'running';
}

function DoneLine({ done }: { done: NonNullable<RunView['done']> }) {
  const { usage } = done;
  return (
    <p class="done" role="status">
      Done: <strong>{done.status}</strong> · {usage.total_tokens} tokens ({usage.prompt_tokens} in, {usage.completion_tokens} out
      {usage.reasoning_tokens ? `, ${usage.reasoning_tokens} reasoning` : ''}) · {(done.durationMs / 1000).toFixed(1)} s
    </p>
  );
}

function Step({ item, runId, waiting, onDecide }: { item: RunItem; runId: string; waiting: boolean; onDecide: Decide }) {
  switch (item.kind) {
    case 'thought':
      return <p class="thought">
          <span class="tag">Thought</span> {item.text}
        </p>;
    case 'text':
      return <p class="said">{item.text}</p>;
    case 'tool':
      return <ToolStep item={item} />;
    case 'approval':
      return <ApprovalStep item={item} runId={runId} waiting={waiting} onDecide={onDecide} />;
    case 'injected':
      return (
        <p class="injected-step">
          <strong>You added:</strong> {item.content}
        </p>
      );
    case 'compaction':
      return (
        <p class="notice small">
          Earlier turns were summarised to fit the model's window: {item.summarized} messages, {item.before} → {item.after} tokens.
        </p>
      );
    case 'error':
      return (
        <p class="error small">
          {item.code}: {item.message}
        </p>
      );
  }
}

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
/** Tool outputs can be long (retrieved passages): the start shows, the rest (bounded) on demand. */
const SHORT_OUTPUT = 300;
const LONG_OUTPUT = 20_000;

function Output({ text }: { text: string }) {
  if (text.length <= SHORT_OUTPUT) return <code>{text}</code>;
  return (
    <details class="long-output">
      <summary>
        <code>{text.slice(0, SHORT_OUTPUT)}…</code>
      </summary>
      <pre>{text.length > LONG_OUTPUT ? `${text.slice(0, LONG_OUTPUT)}…` : text}</pre>
    </details>
  );
}

function ToolStep({ item }: { item: Extract<RunItem, { kind: 'tool' }> }) {
  return (
    <div class="tool">
      <p>
        <span class="tag">Tool</span> <strong>{item.name}</strong> <code>{JSON.stringify(item.arguments)}</code>
      </p>
      {item.result ? (
        <p class={item.result.isError ? 'tool-result failed' : 'tool-result'}>
          {item.result.isError ? 'Failed: ' : '→ '}
          <Output text={asText(item.result.output) ?? ''} />
        </p>
      ) : (
        <p class="muted small">running…</p>
      )}
    </div>
  );
}

function ApprovalStep({ item, runId, waiting, onDecide }: { item: Extract<RunItem, { kind: 'approval' }>; runId: string; waiting: boolean; onDecide: Decide }) {
  const decide = useAction((decision: 'approve' | 'reject') => onDecide(runId, item.callId, decision));
  return (
    <div class="approval" role="group" aria-label={`Approval for ${item.name}`}>
      <p>
        <span class="tag">Approval needed</span> The agent wants to call <strong>{item.name}</strong> <code>{JSON.stringify(item.arguments)}</code>
      </p>
      {item.decision ? (
        <p class="muted small">{item.decision === 'approve' ? 'Approved.' : item.decision === 'reject' ? 'Rejected.' : 'Decided.'}</p>
      ) : waiting ? (
        <div class="row">
          <button type="button" disabled={decide.busy} onClick={() => void decide.run('approve')}>
            Approve
          </button>
          <button type="button" class="danger" disabled={decide.busy} onClick={() => void decide.run('reject')}>
            Reject
          </button>
        </div>
      ) : (
        <p class="muted small">Waiting for the run to pause…</p>
      )}
      <ErrorNotice error={decide.error} />
    </div>
  );
}

function PlanTable({ nodes }: { nodes: PlanNodeView[] }) {
  return (
    <div class="plan">
      <Table
        caption="Plan"
        rows={nodes}
        rowKey={(node) => node.id}
        empty="The plan has no nodes."
        columns={[
          { header: 'Node', cell: (node) => <code>{node.id}</code> },
          { header: 'Task', cell: (node) => node.task },
          { header: 'Depends on', cell: (node) => (node.dependsOn.length ? node.dependsOn.join(', ') : '—') },
          { header: 'State', cell: (node) => <span class={`badge ${node.state === 'pending' ? '' : node.state}`}>{node.state}</span> },
          { header: 'Output', cell: (node) => <span class="node-output">{node.output ?? ''}</span> },
        ]}
      />
    </div>
  );
}
