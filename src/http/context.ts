import type { ParameterizedContext } from 'koa';
import type * as v from 'valibot';
import type { Logger } from 'pino';

/** What every request carries through the middleware (typed, so nothing downstream casts). */
export interface AppState {
  requestId: string;
  log: Logger;
  /** The parsed JSON body (src/http/body.ts), before validation. */
  body?: unknown;
  /** Who made the request, once a guarded route authenticated it (src/auth/route.ts). */
  principal?: unknown;
  /** Why a 429 or 503 was answered: logged with the request line. */
  refusal?: string;
}
export type AppContext = ParameterizedContext<AppState>;
/** Reads a request's body into ctx.state.body, or leaves it (no body, a multipart upload); throws DESIGN §4's errors. */
export type BodyReader = (ctx: AppContext) => Promise<void>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type Schema = v.GenericSchema;

/** A response other than the route's usual status: a different status, or extra headers. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** A response that is not a JSON body: server-sent events, or another media type (the docs page). */
export interface MediaResponse {
  mediaType: string;
  description: string;
  /** The shape of each item (an SSE event's data), for the document. */
  schema?: Schema;
}

/**
 * What a route answers with each status it succeeds with: a valibot schema of the JSON body, a
 * media response, or null (no body). Documentation and contract only: never checked while serving.
 */
export type Responses = Record<number, Schema | MediaResponse | null>;
