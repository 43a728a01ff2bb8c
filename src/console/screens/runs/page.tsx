import type { ComponentChildren } from 'preact';
import { ErrorNotice, Screen, When } from '../../ui/parts';
import { Citations } from '../../ui/attachments';
import { PlanGraph } from './plan-graph';
import { Folded } from './values';
import { useRun, type RunRecord } from './use-run';
import type { RunItem, RunView } from '../chat/transcript';
import type { Timeline } from './timeline';
import './values.css';
import './runs.css';

/** A run's own page (DESIGN §17): what it was asked, how it went step by step, what it answered and cost. */
export function RunPage({ id }: { id: string }) {
  const run = useRun(id);
  const { record, view } = run;
  return (
    <Screen title="Run" actions={record && <a href={`#/chat/${record.conversation_id}`}>Open its conversation</a>}>
      <p class="muted run-id">
        <code>{id}</code>
      </p>
      <ErrorNotice error={run.error} />
      {!record && !run.error && <p aria-busy="true">Loading the run…</p>}
      {record && (
        <>
          <Summary record={record} view={view} following={run.following} />
          {run.reconnecting > 0 && (
            <p class="notice small" role="status">
              The connection dropped; resuming the stream (attempt {run.reconnecting})…
            </p>
          )}
          {run.expired && (
            <p class="notice" role="status">
              This run's events have expired: it shows its final record.
            </p>
          )}
          <Section title="Question">
            <p class="run-text">{record.query ?? <span class="muted">Removed with its conversation.</span>}</p>
          </Section>
          {view.plan && (
            <Section title="Plan">
              <PlanGraph nodes={view.plan} />
              <ol class="plan-list">
                {view.plan.map((node) => (
                  <li key={node.id}>
                    <code>{node.id}</code> <span class={`badge ${node.state === 'pending' ? '' : node.state}`}>{node.state}</span> {node.task}
                    {node.dependsOn.length > 0 && <span class="muted small"> · after {node.dependsOn.join(', ')}</span>}
                    {node.output && <Folded label="Output" value={node.output} />}
                  </li>
                ))}
              </ol>
            </Section>
          )}
          <ToolCalls items={view.items} />
          <Answer record={record} view={view} />
          <Errors record={record} items={view.items} />
          <TimelineView timeline={run.timeline} following={run.following} />
        </>
      )}
    </Screen>
  );
}

function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel run-section" aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

const seconds = (record: RunRecord) => (record.started_at && record.finished_at ? `${((Date.parse(record.finished_at) - Date.parse(record.started_at)) / 1000).toFixed(1)} s` : '—');

function Summary({ record, view, following }: { record: RunRecord; view: RunView; following: boolean }) {
  // While it runs the stream knows the status first; once it ended the record has the final word.
  const status = following && !view.done ? view.status : record.status;
  const usage = view.done?.usage ?? record.usage;
  const fields: [string, ComponentChildren][] = [
    ['Status', <span class={`badge ${badgeOf(status)}`} data-status={status}>{status}</span>],
    ['Mode', record.mode === 'dag' ? 'DAG' : 'ReAct'],
    ['Agent', record.agent_id ? <a href={`#/agents/${record.agent_id}`}>{record.agent_version ? `version ${record.agent_version}` : 'agent'}</a> : 'Default agent'],
    ['Started', <When at={record.started_at ?? record.created_at} />],
    ['Duration', seconds(record)],
    ['Tokens', usage ? `${usage.total_tokens} (${usage.prompt_tokens} in, ${usage.completion_tokens} out${usage.reasoning_tokens ? `, ${usage.reasoning_tokens} reasoning` : ''})` : '—'],
    ['Cost', record.cost === null ? <span class="muted">{record.finished_at ? 'no price for its model' : 'when it ends'}</span> : `$${record.cost.toFixed(6)}`],
    ['Trace', record.trace_id ? <code>{record.trace_id}</code> : <span class="muted">tracing off</span>],
    ...(record.schedule_id ? ([['Schedule', <a href={`#/schedules/${record.schedule_id}`}>started by a schedule</a>]] as [string, ComponentChildren][]) : []),
  ];
  return (
    <dl class="run-summary panel" aria-label="Run summary">
      {fields.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function badgeOf(status: string): string {
  if (status === 'succeeded') return 'succeeded';
  if (['failed', 'cancelled', 'interrupted'].includes(status)) return 'failed';
  return 'running';
}

function ToolCalls({ items }: { items: RunItem[] }) {
  const calls = items.filter((item): item is Extract<RunItem, { kind: 'tool' | 'approval' }> => item.kind === 'tool' || item.kind === 'approval');
  if (calls.length === 0) return null;
  return (
    <Section title="Tool calls">
      <ol class="run-tools">
        {calls.map((call, i) => (
          <li key={`${call.callId}-${i}`} class="run-tool" data-tool={call.name}>
            <p>
              <strong>{call.name}</strong> <span class="muted small">{call.callId}</span>
              {call.kind === 'approval' && <span class="badge">{call.decision ? `approval: ${call.decision}` : 'waiting for approval'}</span>}
              {call.kind === 'tool' && call.result?.isError && <span class="badge failed">failed</span>}
            </p>
            <Folded label="Arguments" value={call.arguments} />
            {call.kind === 'tool' && (call.result ? <Folded label={call.result.isError ? 'Error' : 'Result'} value={call.result.output} /> : <p class="muted small">running…</p>)}
          </li>
        ))}
      </ol>
    </Section>
  );
}

function Answer({ record, view }: { record: RunRecord; view: RunView }) {
  const content = view.answer?.content ?? record.answer ?? (view.streamed || undefined);
  if (content === undefined) return null;
  return (
    <Section title="Answer">
      <p class="run-text">{content}</p>
      {(view.answer?.finishReason ?? record.finish_reason ?? 'stop') !== 'stop' && <p class="muted small">Stopped: {view.answer?.finishReason ?? record.finish_reason}</p>}
      {view.answer && <Citations citations={view.answer.citations} />}
    </Section>
  );
}

function Errors({ record, items }: { record: RunRecord; items: RunItem[] }) {
  const streamed = items.filter((item): item is Extract<RunItem, { kind: 'error' }> => item.kind === 'error');
  const errors = streamed.length ? streamed : record.error ? [{ kind: 'error' as const, ...record.error }] : [];
  if (errors.length === 0) return null;
  return (
    <Section title="Errors">
      <ul class="run-errors">
        {errors.map((error, i) => (
          <li key={i} class="error">
            <code>{error.code}</code>: {error.message}
          </li>
        ))}
      </ul>
    </Section>
  );
}

function TimelineView({ timeline, following }: { timeline: Timeline; following: boolean }) {
  return (
    <Section title="Timeline">
      {timeline.dropped > 0 && <p class="muted small">{timeline.dropped} earlier events not shown.</p>}
      {timeline.entries.length === 0 ? (
        <p class="muted">{following ? 'Waiting for its events…' : 'No events to show.'}</p>
      ) : (
        <ol class="timeline" aria-label="Events">
          {timeline.entries.map((entry) => (
            <li key={entry.id} class={`timeline-${entry.type}`} data-event={entry.type}>
              <span class="timeline-at">+{(entry.at / 1000).toFixed(2)} s</span>
              <span class="timeline-type">{entry.type === 'token' ? `text (${entry.tokens} tokens)` : entry.type}</span>
              <span class="timeline-text">{entry.text}</span>
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}
