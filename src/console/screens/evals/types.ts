import type { operations } from '../../api/schema';

/** The records of datasets and evals as the generated client types them (DESIGN §24; the API names no components for them). */
type Json<O, S extends number> = O extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;

export type Dataset = Json<operations['getApiDatasetsId'], 200>;
export type DatasetItem = Json<operations['getApiDatasetsIdItemsItemId'], 200>;
export type Eval = Json<operations['getApiEvalsId'], 200>;
export type EvalResult = Json<operations['getApiEvalsIdResults'], 200>['items'][number];
export type Comparison = Json<operations['getApiEvalsCompare'], 200>;
export type NewEval = operations['postApiEvals']['requestBody']['content']['application/json'];
export type Scorer = NewEval['scorers'][number];
export type ScorerType = Scorer['type'];
export type EvalStatus = Eval['status'];

export const ACTIVE: readonly EvalStatus[] = ['queued', 'running'];
export const isActive = (e: { status: EvalStatus }) => ACTIVE.includes(e.status);

/** An eval's status as a badge tone (styles.css). */
export const EVAL_TONES: Record<EvalStatus, string> = { queued: 'running', running: 'running', succeeded: 'succeeded', failed: 'failed', cancelled: 'failed' };

/** A score or mean in 0..1 as a percentage; null (nothing scored yet) as a dash. */
export function percent(value: number | null | undefined): string {
  if (value == null) return '—';
  return `${(value * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`;
}

/** An `expected` value as text: strings as they are, anything else as JSON. */
export function expectedText(value: unknown): string {
  if (value == null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export const shortId = (id: string) => id.slice(0, 8);

/** How often a screen asks again while an eval is queued or running. */
export const POLL_MS = 1500;
