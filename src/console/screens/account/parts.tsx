import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import './account.css';

/**
 * A secret the API shows in one response only (a key, a signing secret, a generated password). It
 * lives in this component's state: dismissed or navigated away from, it is gone from the page.
 */
export function SecretOnce({ title, secret, note, onDismiss }: { title: string; secret: string; note: ComponentChildren; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed'>();
  const copy = () =>
    navigator.clipboard.writeText(secret).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  return (
    <div class="panel secret-once" role="region" aria-label={title}>
      <h2>{title}</h2>
      <p class="secret-warning">
        <strong>Copy it now: you will not see it again.</strong> {note}
      </p>
      <p class="secret" data-testid="secret-value">
        {secret}
      </p>
      <div class="row">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDismiss}>
          I have copied it, hide it
        </button>
        <span role="status" class="muted">
          {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? 'The browser refused the clipboard: select the text and copy it.' : ''}
        </span>
      </div>
    </div>
  );
}

export function Badge({ tone, children }: { tone: string; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

/** A checkbox with its label beside it. */
export function Check({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (checked: boolean) => void; disabled?: boolean }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)} />
      {label}
    </label>
  );
}

/** The value of an input event's element. */

export const formatNumber = (n: number | null | undefined) => (n == null ? '—' : n.toLocaleString());

export function formatCost(cost: number | null | undefined): string {
  if (cost == null) return '—';
  return cost.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: cost < 1 ? 6 : 2 });
}

/** A run's tokens from its usage (whose `estimated` flag, DESIGN §21, is not a count). */
export function totalTokens(usage: Record<string, number | boolean> | null | undefined): number | null {
  if (!usage) return null;
  const count = (kind: string) => {
    const value = usage[kind];
    return typeof value === 'number' ? value : 0;
  };
  if (typeof usage.total_tokens === 'number') return usage.total_tokens;
  return count('prompt_tokens') + count('completion_tokens') + count('reasoning_tokens');
}

/** The first line of a text, cut to `length` characters. */
export function excerpt(text: string | null | undefined, length = 80): string {
  if (!text) return '';
  const line = text.split('\n')[0] ?? '';
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

export const RUN_TONES: Record<string, string> = { succeeded: 'succeeded', failed: 'failed', cancelled: 'failed', interrupted: 'failed', running: 'running', queued: 'running', waiting: 'waiting', requires_action: 'waiting' };
