import { routeParts } from '../router';
import { ComparePage } from './evals/compare';
import { DatasetPage } from './evals/dataset';
import { DatasetList } from './evals/datasets';
import { NewEvalForm } from './evals/form';
import { EvalList } from './evals/list';
import { EvalPage } from './evals/page';

/**
 * Evals (DESIGN §24): '/evals' lists them with their progress ('/evals/for/{dataset}' one dataset's),
 * '/evals/new[/{dataset}]' starts one, '/evals/{id}' is one with its results,
 * '/evals/compare/{a}/{b}' compares two; '/evals/datasets[/{id}]' are the datasets and their items.
 */
export default function EvalsScreen({ route }: { route: string }) {
  const [first, second, third] = routeParts(route, '/evals');
  if (first === 'datasets') return second ? <DatasetPage key={second} id={second} /> : <DatasetList />;
  if (first === 'new') return <NewEvalForm key={second ?? ''} datasetId={second} />;
  if (first === 'for' && second) return <EvalList key={second} datasetId={second} />;
  if (first === 'compare' && second && third) return <ComparePage a={second} b={third} />;
  if (first) return <EvalPage key={first} id={first} />;
  return <EvalList />;
}
