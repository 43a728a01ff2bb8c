import { checkOutput as checkAnswer, outputSchemaProblem as schemaProblem, type OutputFormat } from '../shared/output-schema.js';

/**
 * The CPU pool's JSON Schema tasks (DESIGN §21, §23), run in a worker thread: each thread keeps
 * its own compiled validators, so a schema is compiled once per thread however many answers it checks.
 */
export const outputSchemaProblem = schemaProblem;

export function checkOutput({ format, text }: { format: OutputFormat; text: string }) {
  return checkAnswer(format, text);
}
