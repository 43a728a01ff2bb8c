import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { useId } from 'preact/hooks';
import type { Loaded } from './async';

/** An API error as a readable message, announced to screen readers. */
export function ErrorNotice({ error }: { error: Error | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  );
}

/** A screen's frame: its heading (the page's one h1) and optional actions beside it. */
export function Screen({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="screen" aria-labelledby="screen-title">
      <header class="screen-header">
        <h1 id="screen-title">{title}</h1>
        {actions && <div class="screen-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

/** What was loaded: its content, a loading line, or the error (with a retry). */
export function LoadedView<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error) {
    return (
      <div>
        <ErrorNotice error={loaded.error} />
        <button type="button" onClick={loaded.reload}>
          Try again
        </button>
      </div>
    );
  }
  if (loaded.data === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'label'> & { label: string; hint?: string };

/** A labelled input (the label names it for assistive technology and for the tests). */
export function Field({ label, hint, ...input }: InputProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} {...(input as InputHTMLAttributes<HTMLInputElement>)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

type TextAreaProps = Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'label'> & { label: string };

export function TextAreaField({ label, ...textarea }: TextAreaProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} {...(textarea as TextareaHTMLAttributes<HTMLTextAreaElement>)} />
    </div>
  );
}

type SelectProps = Omit<SelectHTMLAttributes<HTMLSelectElement>, 'label'> & { label: string; options: { value: string; label: string }[] };

export function SelectField({ label, options, ...select }: SelectProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} {...(select as SelectHTMLAttributes<HTMLSelectElement>)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A table with a caption (its accessible name); `empty` when there are no rows. On a narrow screen each row stacks, its cells labelled by their headers (styles.css). */
export function Table<T>({ caption, columns, rows, empty, rowKey }: { caption: string; columns: { header: string; cell: (row: T) => ComponentChildren }[]; rows: T[]; empty: string; rowKey: (row: T) => string }) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  return (
    <table class="stacked">
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.header} scope="col">
              {column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)}>
            {columns.map((column) => (
              <td key={column.header} data-label={column.header}>
                <div class="cell">{column.cell(row)}</div>
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}
