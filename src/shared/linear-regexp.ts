import { RE2JS } from 're2js';

/**
 * The regular expressions of caller-supplied JSON Schemas (`pattern`, `patternProperties`) run on
 * RE2 (re2js): matching takes time linear in the text, so no pattern can backtrack for seconds on
 * an answer. RE2 has no backreferences or lookaround; a pattern using them is refused, named.
 */
export class LinearPatternError extends Error {}

const compiled = (pattern: string) => {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    new RegExp(pattern, 'u'); // a pattern that is not a regular expression at all is said so (ajv reports it as invalid)
    const why = (err as Error).message.replace(/^error parsing regexp: /, '');
    throw new LinearPatternError(
      `has a pattern the linear-time regular expression engine cannot run (${JSON.stringify(pattern.slice(0, 100))}: ${why.slice(0, 160)}); patterns use RE2 syntax: no backreferences or lookaround`,
    );
  }
};

/** ajv's `code.regExp`: (pattern, flags) → an object with `test`. ajv's `u` flag is RE2's default (it matches code points). */
export const linearRegExp = Object.assign((pattern: string) => compiled(pattern), { code: 'linearRegExp' });
