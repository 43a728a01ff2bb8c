import * as v from 'valibot';
import { BadRequestError } from '../shared/errors.js';
import { outputSchemaShapeProblem, type OutputFormat } from '../shared/output-schema.js';
import type { CpuWork } from '../cpu/work.js';

/**
 * DESIGN §23 on /v1: chat's `response_format` and responses' `text.format` as the run's output
 * format. `text` (or nothing) is prose; `json_object` any JSON object; `json_schema` a schema the
 * answer is valid against. Anything else is a 400 invalid_request_error naming the parameter.
 */

/** OpenAI's rule for a schema's name. */
const SchemaName = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of a-z, A-Z, 0-9, _ and -'));
const JsonSchemaFields = {
  name: SchemaName,
  schema: v.unknown(),
  strict: v.optional(v.nullable(v.boolean())),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(4096)))),
};
const FORMAT_TYPES = ['text', 'json_object', 'json_schema'] as const;
const FormatType = v.object({ type: v.picklist(FORMAT_TYPES, `must be one of ${FORMAT_TYPES.map((t) => `"${t}"`).join(', ')}`) });

const invalid = (param: string, message: string) => new BadRequestError('invalid_request', `${param} ${message}`, param);

function parsed<S extends v.GenericSchema>(schema: S, value: unknown, param: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = v.getDotPath(issue);
  throw invalid(path ? `${param}.${path}` : param, issue.message);
}

/** The schema's shape is checked here; its compile on the CPU pool (DESIGN §21), bounded in time. */
async function jsonSchemaFormat(fields: v.InferOutput<v.ObjectSchema<typeof JsonSchemaFields, undefined>>, schemaParam: string, cpu: CpuWork): Promise<OutputFormat> {
  if (fields.schema === undefined || fields.schema === null) throw invalid(schemaParam, 'is required: the JSON Schema the answer must be valid against');
  const problem = outputSchemaShapeProblem(fields.schema) ?? (await cpu.outputSchemaProblem(fields.schema));
  if (problem) throw invalid(schemaParam, problem);
  const schema = fields.schema as Record<string, unknown>;
  return { type: 'json_schema', name: fields.name, schema, strict: fields.strict ?? false, ...(fields.description ? { description: fields.description } : {}) };
}

/** Chat's `response_format`: `{type: "json_schema", json_schema: {name, schema, strict?, description?}}`, `{type: "json_object"}` or `{type: "text"}`. */
export async function chatOutputFormat(value: unknown, cpu: CpuWork): Promise<OutputFormat | null> {
  const param = 'response_format';
  if (value === undefined || value === null) return null;
  const { type } = parsed(FormatType, value, param);
  if (type === 'text') return null;
  if (type === 'json_object') return { type: 'json_object' };
  const { json_schema: fields } = parsed(v.object({ json_schema: v.object(JsonSchemaFields) }), value, param);
  return jsonSchemaFormat(fields, `${param}.json_schema.schema`, cpu);
}

/** Responses' `text.format`: `{type: "json_schema", name, schema, strict?, description?}`, `{type: "json_object"}` or `{type: "text"}`. */
export async function responsesOutputFormat(text: unknown, cpu: CpuWork): Promise<OutputFormat | null> {
  const param = 'text.format';
  if (text === undefined || text === null) return null;
  const { format } = parsed(v.object({ format: v.optional(v.nullable(v.unknown())) }), text, 'text');
  if (format === undefined || format === null) return null;
  const { type } = parsed(FormatType, format, param);
  if (type === 'text') return null;
  if (type === 'json_object') return { type: 'json_object' };
  return jsonSchemaFormat(parsed(v.object(JsonSchemaFields), format, param), `${param}.schema`, cpu);
}
