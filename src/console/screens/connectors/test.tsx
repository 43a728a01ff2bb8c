import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { asError } from '../../ui/async';
import { ErrorNotice } from '../../ui/parts';
import type { Connector, ConnectorTestResult } from './types';

interface TestState {
  busy?: boolean;
  result?: ConnectorTestResult;
  error?: Error;
}

export type ConnectorTests = ReturnType<typeof useConnectorTests>;

/** Each connector's last test from this screen: running, its result, or why the request itself failed. */
export function useConnectorTests(onTested: () => void) {
  const { api } = useConsole();
  const [states, setStates] = useState<Record<string, TestState>>({});
  const put = (id: string, state: TestState) => setStates((previous) => ({ ...previous, [id]: state }));
  const run = async (connector: Connector) => {
    put(connector.id, { busy: true });
    try {
      put(connector.id, { result: await must(api.POST('/api/connectors/{id}/test', { params: { path: { id: connector.id } } })) });
      onTested();
    } catch (err) {
      put(connector.id, { error: asError(err) });
    }
  };
  return { states, run };
}

export function TestButton({ connector, tests }: { connector: Connector; tests: ConnectorTests }) {
  const busy = tests.states[connector.id]?.busy ?? false;
  return (
    <button type="button" aria-label={`Test ${connector.name}`} disabled={busy} onClick={() => void tests.run(connector)}>
      {busy ? 'Testing…' : 'Test'}
    </button>
  );
}

/** A test's outcome in words: the tools the server offers, or the reason it could not be reached. */
export function TestOutcome({ connector, tests }: { connector: Connector; tests: ConnectorTests }) {
  const state = tests.states[connector.id];
  if (!state || state.busy) return null;
  const title = `Test of ${connector.name}`;
  if (state.error) {
    return (
      <section class="panel test-outcome failed" aria-label={title}>
        <h2>{title}: the request failed</h2>
        <ErrorNotice error={state.error} />
      </section>
    );
  }
  const result = state.result;
  if (!result) return null;
  if (result.status === 'error') {
    return (
      <section class="panel test-outcome failed" aria-label={title}>
        <h2>{title}: could not connect</h2>
        <p class="error" role="alert">
          {result.error ?? 'The server did not answer as an MCP server.'}
        </p>
        <p class="muted">After {result.latency_ms} ms.</p>
      </section>
    );
  }
  return (
    <section class="panel test-outcome ok" aria-label={title}>
      <h2>{title}: connected</h2>
      <p role="status">
        Listed {result.tools.length} {result.tools.length === 1 ? 'tool' : 'tools'} in {result.latency_ms} ms.
      </p>
      {result.tools.length > 0 && (
        <ul class="tools">
          {result.tools.map((tool) => (
            <li key={tool.name}>
              <code>{tool.name}</code> {tool.description && <span class="muted">— {tool.description}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
