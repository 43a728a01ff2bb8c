import { useEffect, useRef, useState } from 'preact/hooks';
import { useAction } from './async';
import { ErrorNotice } from './parts';

/**
 * A destructive button that asks first, in place: "Delete" becomes the question with a confirming
 * button (focused, so Enter confirms and Tab reaches Cancel). Its failure is shown beside it.
 */
export function ConfirmButton({ label, question, confirmLabel = label, onConfirm }: { label: string; question: string; confirmLabel?: string; onConfirm: () => unknown }) {
  const [asking, setAsking] = useState(false);
  const action = useAction(async () => onConfirm());
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <span class="confirm">
        <button type="button" class="secondary" onClick={() => setAsking(true)}>
          {label}
        </button>
        <ErrorNotice error={action.error} />
      </span>
    );
  }
  return (
    <span class="confirm asking" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        ref={confirmRef}
        type="button"
        class="danger"
        disabled={action.busy}
        onClick={async () => {
          if (await action.run()) setAsking(false);
        }}
      >
        {action.busy ? 'Working…' : confirmLabel}
      </button>
      <button type="button" class="secondary" onClick={() => {
          setAsking(false);
          action.clear();
        }}>
        Cancel
      </button>
      <ErrorNotice error={action.error} />
    </span>
  );
}
