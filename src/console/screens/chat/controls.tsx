import { useState } from 'preact/hooks';
import { ErrorNotice, TextAreaField } from '../../ui/parts';
import { useAction } from '../../ui/async';

/** While a run is active: add a message to it (inject), or cancel it. */
export function ActiveRunControls({ onInject, onCancel, reconnecting }: { onInject: (content: string) => Promise<void>; onCancel: () => Promise<void>; reconnecting: number }) {
  const [content, setContent] = useState('');
  const inject = useAction(async () => {
    await onInject(content.trim());
    setContent('');
  });
  const cancel = useAction(onCancel);
  return (
    <div class="active-run panel" role="region" aria-label="Active run">
      {reconnecting > 0 && (
        <p class="notice small" role="status">
          The connection dropped; resuming the stream (attempt {reconnecting})…
        </p>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (content.trim()) void inject.run();
        }}
      >
        <TextAreaField label="Message to inject" value={content} onInput={(event) => setContent(event.currentTarget.value)} placeholder="Add to the running answer…" />
        <div class="row">
          <button type="submit" disabled={inject.busy || !content.trim()}>
            Inject
          </button>
          <button type="button" class="danger" disabled={cancel.busy} onClick={() => void cancel.run()}>
            Cancel run
          </button>
        </div>
      </form>
      <ErrorNotice error={inject.error ?? cancel.error} />
    </div>
  );
}
