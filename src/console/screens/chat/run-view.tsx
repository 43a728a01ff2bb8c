import { Table, ErrorNotice } from '../../ui/parts';
import { useAction } from '../../ui/async';
import { Citations, Images } from '../../ui/attachments';
import type { PlanNodeView, RunItem, RunView } from './transcript';
import { Folded, ValueView, inlineText, parsedValue } from '../runs/values';
import { runHref } from '../runs/links';
import '../runs/values.css';

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
          {run.runId && (
            <a class="run-link" href={runHref(run.runId)}>
              Run page
            </a>
          )}
        </p>
        {run.status === 'requires_action' && (
          <p class="notice small" role="status">
            Waiting for the client's tool outputs
          </p>
        )}
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
      return item.replaced ? <ReplacedDraft text={item.text} /> : <p class="said">{item.text}</p>;
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
    case 'memory':
      return (
        <details class="notice small memory-step">
          <summary>
            Recalled {item.memories.length} {item.memories.length === 1 ? 'memory' : 'memories'} (<a href="#/memories">Memories</a>)
          </summary>
          <ul>
            {item.memories.map((memory) => (
              <li key={memory.id}>{memory.content}</li>
            ))}
          </ul>
        </details>
      );
    case 'error':
      return (
        <p class="error small">
          {item.code}: {item.message}
        </p>
      );
  }
}

/** A draft answer an injected message replaced: folded, so the answer that counts stands out. */
function ReplacedDraft({ text }: { text: string }) {
  const words = text.trim().split(/\s+/).filter(Boolean).length;
  return (
    <details class="replaced-draft">
      <summary>
        Draft replaced after your message ({words} word{words === 1 ? '' : 's'})
      </summary>
      <p class="said">{text}</p>
    </details>
  );
}

/** A short result reads inline; a long one (retrieved passages) folds under its first line. */
const SHORT_RESULT = 120;

function ToolStep({ item }: { item: Extract<RunItem, { kind: 'tool' }> }) {
  const result = item.result;
  const parsed = result && parsedValue(result.output);
  const short = result && (parsed === null || typeof parsed !== 'object') && inlineText(parsed, Infinity).length <= SHORT_RESULT;
  return (
    <div class="tool">
      <p>
        <span class="tag">{item.client ? 'Client tool' : 'Tool'}</span> <strong>{item.name}</strong> <span class="tool-args">{inlineText(item.arguments)}</span>
      </p>
      {!result ? (
        <p class="muted small">{item.client ? "waiting for the client's output…" : 'running…'}</p>
      ) : short ? (
        <p class={result.isError ? 'tool-result failed' : 'tool-result'}>
          {result.isError ? 'Failed: ' : '→ '}
          <ValueView value={result.output} />
        </p>
      ) : (
        <div class={result.isError ? 'tool-result failed' : 'tool-result'}>
          <Folded label={result.isError ? 'Failed' : 'Result'} value={result.output} />
        </div>
      )}
    </div>
  );
}

function ApprovalStep({ item, runId, waiting, onDecide }: { item: Extract<RunItem, { kind: 'approval' }>; runId: string; waiting: boolean; onDecide: Decide }) {
  const decide = useAction((decision: 'approve' | 'reject') => onDecide(runId, item.callId, decision));
  return (
    <div class="approval" role="group" aria-label={`Approval for ${item.name}`}>
      <p>
        <span class="tag">Approval needed</span> The agent wants to call <strong>{item.name}</strong>
      </p>
      <Folded label="Arguments" value={item.arguments} open />
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
