/** The value of the input, select or textarea an event came from. */
export function valueOf(event: Event): string {
  return (event.currentTarget as HTMLInputElement).value;
}

export function checkedOf(event: Event): boolean {
  return (event.currentTarget as HTMLInputElement).checked;
}

/** A list with `item` added or removed. */
export function toggled<T>(list: T[], item: T, on: boolean): T[] {
  return on ? (list.includes(item) ? list : [...list, item]) : list.filter((x) => x !== item);
}

/** An optional whole number typed into a field: empty is null; anything else must be an integer. */
export function optionalInteger(text: string, field: string): number | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const number = Number(trimmed);
  if (!Number.isInteger(number)) throw new Error(`${field} must be a whole number`);
  return number;
}

export function requiredInteger(text: string, field: string): number {
  const number = optionalInteger(text, field);
  if (number === null) throw new Error(`${field} is required`);
  return number;
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/** "1 document", "3 documents". */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * A 422 named in the form's own words: each invalid field by its label (`cron` → "Cron expression")
 * rather than the API's field name; any other error as it is.
 */
export function labelledError(error: Error | undefined, labels: Record<string, string>): Error | undefined {
  const fields = (error as { fields?: { path: string; msg: string }[] } | undefined)?.fields;
  if (!error || !fields?.length) return error;
  const lines = fields.map(({ path, msg }) => {
    const label = labels[path] ?? labels[path.split('.')[0]!] ?? path;
    // "Value error, " is the FastAPI-style prefix of a check's message; it says nothing to a person.
    const said = msg.replace(/^Value error,\s*/i, '');
    return `${label}: ${said.charAt(0).toUpperCase()}${said.slice(1)}`;
  });
  return new Error([...new Set(lines)].join('\n'));
}
