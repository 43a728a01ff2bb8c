import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { navigate } from '../../router';
import { useLoad } from '../../ui/async';
import { LoadedView, Screen } from '../../ui/parts';
import { ConfirmButton } from '../../ui/confirm';
import { AgentForm } from './form';
import { AgentVersions } from './versions';
import type { Agent } from './draft';
import { chatWithAgent } from './names';
import '../builder/builder.css';
import './agents.css';

export function NewAgent() {
  return (
    <Screen title="New agent">
      <p>
        <a href="#/agents">← All agents</a>
      </p>
      <AgentForm onSaved={(agent) => navigate(`/agents/${agent.id}`)} />
    </Screen>
  );
}

/** One agent: its form (each save is a new version), its versions with restore, delete. */
export function AgentPage({ id }: { id: string }) {
  const { api } = useConsole();
  const loaded = useLoad(() => must(api.GET('/api/agents/{id}', { params: { path: { id } } })), [id]);
  const [current, setCurrent] = useState<{ agent: Agent; how: string }>();
  const agent = current?.agent ?? loaded.data;
  const remove = async () => {
    await must(api.DELETE('/api/agents/{id}', { params: { path: { id } } }));
    navigate('/agents');
  };
  return (
    <Screen
      title={agent ? agent.name : 'Agent'}
      actions={
        <div class="actions">
          <a class="button secondary" href={chatWithAgent(id)}>
            Open the chat
          </a>
          <a class="button secondary" href={`#/memories/${id}`}>
            Memories
          </a>
          <ConfirmButton label="Delete agent" question="Delete this agent? Its conversations and runs stay." confirmLabel="Delete" onConfirm={remove} />
        </div>
      }
    >
      <p>
        <a href="#/agents">← All agents</a>
      </p>
      <LoadedView loaded={loaded}>
        {() =>
          agent && (
            <>
              <p class="muted">
                Version {agent.version} · id <code>{agent.id}</code>
              </p>
              {current && (
                <p class="notice" role="status">
                  {current.how} version {current.agent.version}.
                </p>
              )}
              {/* Keyed by version: a save or restore starts the form again from what the API now holds. */}
              <AgentForm key={agent.version} agent={agent} onSaved={(saved) => setCurrent({ agent: saved, how: 'Saved as' })} />
              <AgentVersions id={agent.id} currentVersion={agent.version} onRestored={(restored, from) => setCurrent({ agent: restored, how: `Restored version ${from} as` })} />
            </>
          )
        }
      </LoadedView>
    </Screen>
  );
}
