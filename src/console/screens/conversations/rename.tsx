import { useState } from 'preact/hooks';
import { must } from '../../api';
import { useConsole } from '../../context';
import { useAction } from '../../ui/async';
import { ErrorNotice, Field } from '../../ui/parts';
import { valueOf } from '../../ui/forms';

/** The conversation's title, changed in place (PATCH /api/conversations/{id}); an empty title leaves it untitled. */
export function RenameConversation({ id, title, onRenamed }: { id: string; title: string | null; onRenamed: () => void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState<string | undefined>();
  const save = useAction(async () => {
    await must(api.PATCH('/api/conversations/{id}', { params: { path: { id } }, body: { title: (draft ?? '').trim() } }));
    setDraft(undefined);
    onRenamed();
  });
  if (draft === undefined) {
    return (
      <button type="button" class="secondary" onClick={() => setDraft(title ?? '')}>
        Rename
      </button>
    );
  }
  return (
    <form
      class="panel rename"
      aria-label="Rename conversation"
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <Field label="Title" maxLength={512} value={draft} autoFocus onInput={(event: Event) => setDraft(valueOf(event))} hint="Empty: untitled" />
      <ErrorNotice error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save title'}
        </button>
        <button type="button" class="secondary" onClick={() => setDraft(undefined)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
