import type { OutputFormat } from '../../../src/shared/output-schema.js';

/** DESIGN §23: the structured-output parameter in each wire format's spelling. */

/** Chat completions: `response_format`. */
export function chatResponseFormat(format: OutputFormat) {
  if (format.type === 'json_object') return { type: 'json_object' as const };
  const { name, schema, strict, description } = format;
  return { type: 'json_schema' as const, json_schema: { name, schema, strict, ...(description ? { description } : {}) } };
}

/** Responses: `text.format`. */
export function responsesTextFormat(format: OutputFormat) {
  if (format.type === 'json_object') return { format: { type: 'json_object' as const } };
  const { name, schema, strict, description } = format;
  return { format: { type: 'json_schema' as const, name, schema, strict, ...(description ? { description } : {}) } };
}

/** Native (Gemini's generateContent): JSON as the response's MIME type, and the schema as `responseJsonSchema`. */
export function nativeGenerationFormat(format: OutputFormat) {
  return { responseMimeType: 'application/json', ...(format.type === 'json_schema' ? { responseJsonSchema: format.schema } : {}) };
}
