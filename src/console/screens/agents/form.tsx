import { useId, useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction, useLoad } from '../../ui/async';
import { ErrorNotice, Field, SelectField, TextAreaField } from '../../ui/parts';
import { CheckGroup } from '../builder/checks';
import { checkedOf, valueOf } from '../../ui/forms';
import { PICKER_SIZE } from '../../ui/pager';
import { API_FORMATS, LOCAL_MODEL, REASONING_EFFORTS, TOOLS, bodyOf, changesOf, draftOf, effectiveModel, type Agent, type Approval, type Draft } from './draft';
import './agents.css';

/** Creates an agent (no `agent`) or changes one: a change sends only the fields that differ, as the agent's next version. */
export function AgentForm({ agent, onSaved }: { agent?: Agent; onSaved: (agent: Agent) => void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState<Draft>(() => draftOf(agent));
  const [note, setNote] = useState<string>();
  const memoryHint = useId();
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => {
    setNote(undefined);
    setDraft((previous) => ({ ...previous, [field]: value }));
  };
  const choices = useLoad(
    () =>
      Promise.all([
        must(api.GET('/api/knowledge-bases', { params: { query: { size: PICKER_SIZE } } })),
        must(api.GET('/api/connectors', { params: { query: { size: PICKER_SIZE } } })),
        must(api.GET('/api/agent-defaults')),
      ]),
    [],
  );
  const save = useAction(async () => {
    const body = bodyOf(draft);
    if (!agent) return onSaved(await must(api.POST('/api/agents', { body })));
    const changes = changesOf(agent, body);
    if (Object.keys(changes).length === 0) return setNote('Nothing has changed.');
    const saved = await must(api.PATCH('/api/agents/{id}', { params: { path: { id: agent.id } }, body: changes }));
    onSaved(saved);
  });
  const [kbs, connectors, defaults] = choices.data ?? [undefined, undefined, undefined];
  // With the local model these options do nothing: say so beside each rather than hide what the agent keeps.
  const local = effectiveModel(draft, defaults?.model) === LOCAL_MODEL;
  const gatewayOnly = local ? ' (gateway models only)' : '';
  return (
    <form
      class="panel agent-form"
      aria-label={agent ? 'Edit agent' : 'New agent'}
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <div class="form-grid">
        <Field label="Name" required maxLength={200} value={draft.name} onInput={(e) => set('name', valueOf(e))} />
        <Field
          label="Model"
          value={draft.model}
          onInput={(e) => set('model', valueOf(e))}
          placeholder="The deployment's default model"
          hint={defaults ? `Empty: the deployment's default model (now ${defaults.model}), also after it changes` : "Empty: the deployment's default model"}
        />
        <SelectField label={`API format${gatewayOnly}`} value={draft.apiFormat} options={API_FORMATS} onChange={(e) => set('apiFormat', valueOf(e) as Draft['apiFormat'])} />
        <SelectField
          label={`Reasoning effort${gatewayOnly}`}
          value={draft.reasoningEffort}
          options={[{ value: '', label: "Model's default" }, ...REASONING_EFFORTS.map((effort) => ({ value: effort, label: effort }))]}
          onChange={(e) => set('reasoningEffort', valueOf(e) as Draft['reasoningEffort'])}
        />
        <Field label="Max iterations" type="number" min={1} max={50} required value={draft.maxIterations} onInput={(e) => set('maxIterations', valueOf(e))} />
        <Field label="Max tokens" type="number" min={1} value={draft.maxTokens} onInput={(e) => set('maxTokens', valueOf(e))} hint="Empty: the model's default" />
        <Field label="Context window" type="number" value={draft.contextWindow} onInput={(e) => set('contextWindow', valueOf(e))} hint="Tokens; empty: the model's default" />
 <Field label={`Thinking budget${gatewayOnly}`} type="number" min={-1} value={draft.thinkingBudget} onInput={(e) => set('thinkingBudget', valueOf(e))} hint="Empty: none" />
        <div class="wide">
          <TextAreaField label="Instructions" rows={5} maxLength={20000} value={draft.instructions} onInput={(e) => set('instructions', valueOf(e))} />
        </div>
      </div>
      <CheckGroup legend="Tools" options={TOOLS} chosen={draft.tools} onChange={(tools) => set('tools', tools as Draft['tools'])} />
      <div class="memory-switch">
        <label>
          <input type="checkbox" checked={draft.memory} onChange={(e) => set('memory', checkedOf(e))} aria-describedby={memoryHint} />
          <span>Memory</span>
        </label>
        <small id={memoryHint} class="hint">
          Remembers across conversations: the agent gets the remember and recall tools, and its closest memories are given to it before each run (see them in <a href="#/memories">Memories</a>).
        </small>
      </div>
      <ErrorNotice error={choices.error} />
      {choices.data === undefined && !choices.error && <p aria-busy="true">Loading knowledge bases and connectors…</p>}
      {kbs && (
        <CheckGroup
          legend="Knowledge bases"
          options={kbs.items.map((kb) => ({ value: kb.id, label: kb.name }))}
          chosen={draft.knowledgeBaseIds}
          onChange={(ids) => set('knowledgeBaseIds', ids)}
          empty="You have no knowledge bases yet."
        />
      )}
      {connectors && (
        <CheckGroup
          legend="Connectors"
          options={connectors.items.map((c) => ({ value: c.id, label: c.name, hint: c.tools.length ? `${c.tools.length} tools` : undefined }))}
          chosen={draft.connectorIds}
          onChange={(ids) => set('connectorIds', ids)}
          empty="You have no connectors yet."
        />
      )}
      <div class="form-grid">
        <SelectField
          label="Tool approval"
          value={draft.approval}
          options={[
            { value: 'never', label: 'Never ask' },
            { value: 'always', label: 'Ask before every tool call' },
            { value: 'listed', label: 'Ask for these tools' },
          ]}
          onChange={(e) => set('approval', valueOf(e) as Approval)}
        />
        {draft.approval === 'listed' && (
          <Field label="Tools needing approval" value={draft.approvalTools} onInput={(e) => set('approvalTools', valueOf(e))} hint="Comma-separated: built-in tools or <connector>__<tool>" />
        )}
      </div>
      {local && (
        <p class="notice small gateway-note" role="note">
          This agent runs on the built-in <code>{LOCAL_MODEL}</code> model{draft.model.trim() ? '' : ", the deployment's default"}: the API format, reasoning effort, thinking budget and gateway tools apply to gateway models only
          {defaults?.gateway ? '.' : ' (none is configured: GATEWAY_URL).'}
        </p>
      )}
      <fieldset class="checks gateway">
        <legend>Gateway tools{gatewayOnly}</legend>
        <label>
          <input type="checkbox" checked={draft.webSearch} onChange={(e) => set('webSearch', checkedOf(e))} />
          <span>Web search</span>
        </label>
        <TextAreaField label="Gateway MCP servers" rows={2} placeholder="label https://mcp.example.com/mcp" value={draft.mcpServers} onInput={(e) => set('mcpServers', valueOf(e))} />
      </fieldset>
      <ErrorNotice error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : agent ? 'Save changes' : 'Create agent'}
        </button>
        {note && (
          <span class="saved" role="status">
            {note}
          </span>
        )}
      </div>
    </form>
  );
}
