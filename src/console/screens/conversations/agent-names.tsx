import { must } from '../../api';
import { useConsole } from '../../context';
import { useLoad } from '../../ui/async';
import { PICKER_SIZE } from '../../ui/pager';
import { DEFAULT_AGENT_LABEL } from '../agents/names';

/** An agent's name for a conversation's agent_id: the default agent, a known one (linked), or one since deleted. */
export function useAgentNames() {
  const { api } = useConsole();
  const agents = useLoad(() => must(api.GET('/api/agents', { params: { query: { size: PICKER_SIZE } } })), []);
  return (agentId: string | null) => {
    if (!agentId) return <span class="muted">{DEFAULT_AGENT_LABEL}</span>;
    const agent = agents.data?.items.find((a) => a.id === agentId);
    if (agent) return <a href={`#/agents/${agent.id}`}>{agent.name}</a>;
    if (agents.data === undefined) return <span class="muted">…</span>;
    return <span class="muted" title={agentId}>Deleted agent</span>;
  };
}
