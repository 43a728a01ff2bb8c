import * as v from 'valibot';
import { parseInput, uuidText } from '../http/validation.js';
import { ValidationError } from '../shared/errors.js';

/** As POST /api/react's `q`. */
export const MAX_QUERY_LENGTH = 32_000;

/** A tool's arguments (its inputSchema): as `q` and `conversation_id` of POST /api/react. */
const CallArguments = v.strictObject({
  q: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(MAX_QUERY_LENGTH)),
  conversation_id: v.optional(v.nullable(uuidText)),
});

const MAX_MESSAGE = 1000;

export type AgentCallArguments = { q: string; conversationId: string | null };

/**
 * The arguments, or why they are refused, each problem named by its argument (`q: Field required`).
 * The same checks as the REST routes: text Postgres cannot store (NUL, lone surrogates) is refused here too.
 */
export function parseCallArguments(raw: unknown): { ok: true; value: AgentCallArguments } | { ok: false; message: string } {
  try {
    const parsed = parseInput(CallArguments, raw ?? {}, 'body');
    return { ok: true, value: { q: parsed.q, conversationId: parsed.conversation_id ?? null } };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const problems = err.detail.map((issue) => `${issue.loc.slice(1).join('.') || 'arguments'}: ${issue.msg}`).join('; ');
    // Argument names are the client's: an error repeats at most a line of them.
    return { ok: false, message: problems.length <= MAX_MESSAGE ? problems : `${problems.slice(0, MAX_MESSAGE)}…` };
  }
}
