import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction } from '../../ui/async';
import { labelledError, valueOf } from '../../ui/forms';
import { ErrorNotice, SelectField } from '../../ui/parts';
import { MEMORY_MAX_CHARS, USER_NAMESPACE } from './types';

/**
 * Adds a memory to the user's namespace or one agent's. The length is counted as it is typed but
 * not cut: past the limit the API's refusal (422) is shown, as is its 409 when the user has as many
 * memories as the deployment allows.
 */
export function AddMemory({ initialNamespace, agents, nameOf, onAdded }: { initialNamespace: string; agents: { id: string; name: string }[] | undefined; nameOf: (ns: string) => string; onAdded: () => void }) {
  const { api } = useConsole();
  const [namespace, setNamespace] = useState(initialNamespace);
  const [content, setContent] = useState('');
  const [added, setAdded] = useState<string>();
  const add = useAction(async () => {
    setAdded(undefined);
    await must(api.POST('/api/memories', { body: { namespace, content } }));
    setContent('');
    setAdded(`Added to ${nameOf(namespace)}.`);
    onAdded();
  });
  const options = [
    { value: USER_NAMESPACE, label: nameOf(USER_NAMESPACE) },
    ...(agents ?? []).map((agent) => ({ value: agent.id, label: agent.name })),
    // The namespace shown may be a deleted agent's: it stays choosable (the API decides).
    ...(namespace !== USER_NAMESPACE && agents && !agents.some((a) => a.id === namespace) ? [{ value: namespace, label: nameOf(namespace) }] : []),
  ];
  const over = content.length > MEMORY_MAX_CHARS;
  return (
    <form
      class="panel memories-add"
      aria-labelledby="add-memory-title"
      onSubmit={(event) => {
        event.preventDefault();
        void add.run();
      }}
    >
      <h2 id="add-memory-title">Add memory</h2>
      <SelectField label="Add to namespace" value={namespace} options={options} onChange={(e) => setNamespace(valueOf(e))} />
      <div class="field">
        <label for="memory-content">Content</label>
        <textarea
          id="memory-content"
          rows={3}
          required
          value={content}
          aria-describedby="memory-content-count"
          onInput={(e) => {
            setAdded(undefined);
            setContent(valueOf(e));
          }}
        />
        <small id="memory-content-count" class={over ? 'hint memory-over' : 'hint'}>
          {content.length.toLocaleString()} / {MEMORY_MAX_CHARS.toLocaleString()} characters
        </small>
      </div>
      <ErrorNotice error={labelledError(add.error, { content: 'Content', namespace: 'Namespace', metadata: 'Metadata' })} />
      <div class="actions">
        <button type="submit" disabled={add.busy}>
          {add.busy ? 'Adding…' : 'Add memory'}
        </button>
        {added && (
          <span class="saved" role="status">
            {added}
          </span>
        )}
      </div>
    </form>
  );
}
