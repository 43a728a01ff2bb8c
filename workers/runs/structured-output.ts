import type { OutputFormat } from '../../src/shared/output-schema.js';
import type { RunContext } from './run-context.js';
import { RunFailure } from './run-control.js';
import type { ChatMessage, ModelResult } from '../models/types.js';

/** A run's final answer: its text, and (with an output schema) that text parsed. */
export interface FinalAnswer {
  text: string;
  output?: unknown;
}

const repairRequest = (format: OutputFormat, errors: string[]) =>
  [
    format.type === 'json_object' ? 'Your answer must be a single JSON object.' : 'Your answer must be a single JSON value valid against the required JSON Schema.',
    `It was not: ${errors.join('; ')}.`,
    'Answer again with only the corrected JSON, no other text.',
  ].join(' ');

/**
 * DESIGN §23: the model's final answer checked against the run's output format. An answer the
 * validator refuses goes back to the model with the errors, up to OUTPUT_REPAIR_ATTEMPTS times
 * (each a model call like any other: streamed, charged, traced); still invalid → `output_invalid`.
 * A run without an output format answers in prose, unchecked.
 */
export async function finalAnswer(ctx: RunContext, text: string, messages: ChatMessage[], iteration: number, scope?: string): Promise<FinalAnswer> {
  const format = ctx.agent.outputFormat;
  if (!format) return { text };
  let answer: Pick<ModelResult, 'text'> = { text };
  const repairs: ChatMessage[] = [];
  for (let attempt = 0; ; attempt++) {
    const checked = await ctx.checkOutput(format, answer.text);
    if (checked.ok) return { text: checked.text, output: checked.output };
    if (attempt >= ctx.outputRepairAttempts) {
      throw new RunFailure('output_invalid', `The answer is not valid against the output schema after ${attempt} repair attempt${attempt === 1 ? '' : 's'}: ${checked.errors.join('; ')}`.slice(0, 2000));
    }
    ctx.log.info({ errors: checked.errors, attempt: attempt + 1 }, 'answer invalid against the output schema; asking the model to repair it');
    repairs.push({ role: 'assistant', content: answer.text }, { role: 'user', content: repairRequest(format, checked.errors) });
    answer = await ctx.complete([...messages, ...repairs], iteration, { tools: [], scope, structured: true });
  }
}
