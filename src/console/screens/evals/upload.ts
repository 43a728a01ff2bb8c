import { apiFailure } from '../../session';

/** The files the API reads items from (src/evals/item-upload.ts): the file picker offers these. */
export const ITEM_EXTENSIONS = '.jsonl,.ndjson,.csv,.json';

export interface ItemsAdded {
  added: number;
  item_count: number;
}

/**
 * Sends one JSONL, CSV or JSON file of items as multipart (the generated client does not cover
 * uploads). All or none: a refusal (422) says which item and why, e.g. "items.2.input.q".
 */
export async function uploadItems(authorizedFetch: (request: Request) => Promise<Response>, datasetId: string, file: File): Promise<ItemsAdded> {
  const form = new FormData();
  form.append('file', file, file.name);
  const res = await authorizedFetch(new Request(`${location.origin}/api/datasets/${encodeURIComponent(datasetId)}/items`, { method: 'POST', body: form }));
  if (!res.ok) throw readable(await apiFailure(res));
  return (await res.json()) as ItemsAdded;
}

/** A 422 about items named the way a person counts them: `items.2.input.q` → "Item 3, input.q". */
function readable(error: Error & { fields?: { path: string; msg: string }[] }): Error {
  const fields = error.fields ?? [];
  if (fields.length === 0) return error;
  const lines = fields.map(({ path, msg }) => {
    const item = /^items\.(\d+)(?:\.(.+))?$/.exec(path);
    const where = item ? `Item ${Number(item[1]) + 1}${item[2] ? `, ${item[2]}` : ''}` : path === 'request' || path === 'file' ? 'The file' : path;
    return `${where}: ${msg}`;
  });
  const refused = new Error(`The file was refused, nothing was added.\n${[...new Set(lines)].join('\n')}`);
  return Object.assign(refused, { status: (error as { status?: number }).status });
}
