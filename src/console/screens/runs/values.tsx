import type { ComponentChildren } from 'preact';

/**
 * Tool arguments and results as people read them: text as text, objects as labelled fields, lists
 * as lists, never a JSON blob. A string holding JSON (many tools answer so) is read as its value.
 */

/** Past this depth the rest shows as indented JSON; past these counts the rest is summed up. */
const MAX_DEPTH = 4;
const MAX_ITEMS = 50;
const MAX_TEXT = 20_000;
/** A value whose plain text is shorter than this reads inline (`a: 1, b: "x"`). */
const INLINE = 80;

/** A string that is a JSON object or list, parsed; anything else as it is. */
export function parsedValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!/^[[{]/.test(text)) return value;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return value;
  }
}

/** One line for a value: what a folded summary shows. */
export function inlineText(value: unknown, room = INLINE): string {
  const parsed = parsedValue(value);
  const text =
    parsed !== null && typeof parsed === 'object'
      ? Array.isArray(parsed)
        ? `${parsed.length} item${parsed.length === 1 ? '' : 's'}`
        : Object.entries(parsed)
            .map(([key, item]) => `${key}: ${typeof item === 'object' && item !== null ? '…' : String(item)}`)
            .join(', ')
      : String(parsed);
  return text.length > room ? `${text.slice(0, room - 1)}…` : text;
}

export function ValueView({ value, depth = 0 }: { value: unknown; depth?: number }): preact.JSX.Element {
  const parsed = parsedValue(value);
  if (parsed === null || parsed === undefined) return <span class="muted">none</span>;
  if (typeof parsed === 'string') return <TextValue text={parsed} />;
  if (typeof parsed !== 'object') return <code>{String(parsed)}</code>;
  if (depth >= MAX_DEPTH) return <pre class="value-json">{JSON.stringify(parsed, null, 2).slice(0, MAX_TEXT)}</pre>;
  if (Array.isArray(parsed)) return <ListValue items={parsed} depth={depth} />;
  const entries = Object.entries(parsed);
  if (entries.length === 0) return <span class="muted">(empty)</span>;
  return (
    <dl class="value-fields">
      {entries.slice(0, MAX_ITEMS).map(([key, item]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <ValueView value={item} depth={depth + 1} />
          </dd>
        </div>
      ))}
      {entries.length > MAX_ITEMS && <More count={entries.length - MAX_ITEMS} what="fields" />}
    </dl>
  );
}

function ListValue({ items, depth }: { items: unknown[]; depth: number }) {
  if (items.length === 0) return <span class="muted">(empty list)</span>;
  return (
    <ol class="value-list">
      {items.slice(0, MAX_ITEMS).map((item, i) => (
        <li key={i}>
          <ValueView value={item} depth={depth + 1} />
        </li>
      ))}
      {items.length > MAX_ITEMS && <More count={items.length - MAX_ITEMS} what="items" />}
    </ol>
  );
}

function TextValue({ text }: { text: string }) {
  const shown = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
  return <span class="value-text">{shown}</span>;
}

function More({ count, what }: { count: number; what: string }): ComponentChildren {
  return <p class="muted small">and {count} more {what}</p>;
}

/** A value folded under a one-line summary (details/summary): open it to read all of it. */
export function Folded({ label, value, open = false }: { label: string; value: unknown; open?: boolean }) {
  return (
    <details class="folded-value" open={open}>
      <summary>
        <span class="folded-label">{label}</span> <span class="folded-inline">{inlineText(value)}</span>
      </summary>
      <div class="folded-body">
        <ValueView value={value} />
      </div>
    </details>
  );
}
