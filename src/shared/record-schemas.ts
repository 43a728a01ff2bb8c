import * as v from 'valibot';

/**
 * The pieces every response record is built from (DESIGN §12). Each domain's records.ts declares its
 * records with them, beside the function that presents a row as one, which returns the record's type.
 */

export const instant = v.pipe(v.string(), v.isoTimestamp());
export const uuid = v.pipe(v.string(), v.uuid());
export const count = v.pipe(v.number(), v.integer(), v.minValue(0));
export const described = <S extends v.GenericSchema>(schema: S, text: string) => v.pipe(schema, v.description(text));

/** Token counts by kind, and `estimated: true` when a model call was cut off before its provider reported usage (DESIGN §21). */
export const tokenCounts = v.record(v.string(), v.union([v.number(), v.boolean()]));

/** The spec's page envelope around `item`. */
export const pageOf = <S extends v.GenericSchema>(item: S) =>
  v.strictObject({ items: v.array(item), total: count, page: v.pipe(v.number(), v.integer(), v.minValue(1)), size: v.pipe(v.number(), v.integer(), v.minValue(1)), pages: count });
