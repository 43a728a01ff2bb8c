import type { Run } from '../db/models.js';
import type { BudgetRef } from '../budgets/ledger.js';
import type { AppContext } from '../http/context.js';
import { SseStream } from '../http/sse.js';
import { runLogFields } from '../logger.js';
import type { FileService } from '../files/service.js';
import { followRun, parkEventId, RunTally } from '../runs/follow.js';
import type { EventRelay } from '../runs/relay.js';
import { runRef, type RunService } from '../runs/service.js';
import { BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../shared/errors.js';
import type { RunEvent } from '../shared/events.js';
import { modelIdOf, notAnAgent } from './models.js';
import type { ClientTurn, InlineImage } from './requests.js';
import type { OutputFormat } from '../shared/output-schema.js';
import type { ToolOutput } from '../shared/client-tools.js';

/** Where a client follows its run from: a new run from its start, a resumed one after its parking. */
export interface Followed {
  run: Run;
  afterId: string;
}

/** Writes a run's events in a client's protocol (chat chunks, Responses events). */
export interface StreamWriter {
  observe(event: RunEvent, tally: RunTally): void;
  /** The run parked for the client's tool outputs (DESIGN §23): the tally has its calls and its usage so far. */
  parked(tally: RunTally): void;
}

export interface ClientRunRequest {
  userId: string;
  /** The token budgets of the caller's credential (DESIGN §18). */
  budgets: readonly BudgetRef[];
  agentId: string | null;
  conversationId?: string;
  turn: ClientTurn;
  /** DESIGN §23: response_format / text.format; null: prose. */
  outputFormat?: OutputFormat | null;
}

const DATA_URL = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)?((?:;[a-z0-9=.+-]+)*);base64,/i;

/**
 * Runs for the OpenAI-compatible endpoints (DESIGN §16), through the same path as /api/react: the
 * same start (claim, store, queue), the same relay. What differs is the protocol, and that a client
 * that leaves before the end cancels its run (an OpenAI client has no way to come back to it).
 */
export class ClientRuns {
  constructor(
    private readonly runs: RunService,
    private readonly relay: EventRelay,
    private readonly files: FileService,
    private readonly openStreams: Set<SseStream>,
  ) {}

  async start(ctx: AppContext, request: ClientRunRequest): Promise<Run> {
    const { userId, agentId, turn } = request;
    const imageIds = await this.attach(userId, turn.images);
    const run = await this.runs
      .start({ userId, mode: 'react', query: turn.question, conversationId: request.conversationId, agentId, imageIds, history: turn.history, sampling: turn.sampling, userMetadata: turn.userMetadata, requestId: ctx.state.requestId, budgets: request.budgets, outputFormat: request.outputFormat, clientTools: turn.clientTools })
      .catch((err: unknown) => {
        // The agent is the only thing start looks up that the client named by `model`.
        if (err instanceof NotFoundError && agentId && err.resource === 'Agent') throw notAnAgent(modelIdOf(agentId));
        throw clientToolClash(err) ?? err;
      });
    this.identify(ctx, run);
    return run;
  }

  /**
   * Answers a run parked for its client (DESIGN §23) with the client's tool outputs: the same run
   * resumes. Returns where its resumption starts (after the parking's event), to follow from there.
   * A run that is not (or no longer) parked on these calls → 400 in OpenAI's shape.
   */
  async resume(ctx: AppContext, run: Run, outputs: ToolOutput[]): Promise<Followed> {
    if (run.status !== 'requires_action') throw new BadRequestError('invalid_request', `the response ${run.id} is not awaiting tool outputs (it is ${run.status})`, 'previous_response_id');
    const watch = watchClient(ctx);
    try {
      const afterId = await parkEventId(this.relay, runRef(run), watch.signal);
      await this.runs.submitToolOutputs(run.user_id, run.id, outputs).catch((err: unknown) => {
        if (err instanceof ConflictError) throw new BadRequestError('invalid_request', `${err.message} (${err.code})`, 'tool_call_id');
        throw err;
      });
      this.identify(ctx, run);
      return { run, afterId: afterId ?? '0-0' };
    } finally {
      watch.dispose();
    }
  }

  private identify(ctx: AppContext, run: Run): void {
    ctx.set({ 'X-Run-Id': run.id, 'X-Conversation-Id': run.conversation_id });
    ctx.state.log = ctx.state.log.child(runLogFields(run));
  }

  /**
   * Follows the run to its end or its parking for the client's tools (DESIGN §23); undefined when
   * the client left first (the run is then cancelled; a parked run is not: its client comes back).
   */
  async finish(ctx: AppContext, followed: Followed): Promise<RunTally | undefined> {
    const watch = watchClient(ctx);
    try {
      const tally = await this.follow(followed, watch.signal);
      const answered = tally.status || tally.parked;
      if (!answered) await this.abandon(followed.run);
      return answered ? tally : undefined;
    } finally {
      watch.dispose();
    }
  }

  /**
   * Answers with the run as a stream in the writer's protocol. Returns at once: the stream is
   * Koa's response body, written as events arrive. A client that leaves cancels the run; a
   * shutting-down web process ends the stream and leaves the run to finish.
   */
  stream(ctx: AppContext, followed: Followed, open: (sse: SseStream, tally: RunTally) => StreamWriter): void {
    const tally = new RunTally();
    // Watching before the stream exists: at a client's leaving, `left` is known before the stream closes.
    const watch = watchClient(ctx);
    const sse = new SseStream(ctx, {}, this.openStreams);
    const writer = open(sse, tally);
    sse.onClose(() => watch.stop());
    this.follow(followed, watch.signal, tally, (event) => writer.observe(event, tally))
      .then(async () => {
        if (tally.parked) writer.parked(tally);
        else if (!tally.status && watch.clientLeft()) await this.abandon(followed.run);
      })
      .catch((err: unknown) => ctx.state.log.warn({ err }, 'stream of a client run ended early'))
      .finally(() => {
        watch.dispose();
        sse.close();
      });
  }

  private async follow({ run, afterId }: Followed, signal: AbortSignal, tally = new RunTally(), onEvent?: (event: RunEvent) => void): Promise<RunTally> {
    for await (const event of followRun(this.relay, runRef(run), signal, afterId)) {
      tally.observe(event);
      onEvent?.(event);
    }
    // The parking wrote the run's usage so far on its row before its event (no `done` carries it yet).
    if (tally.parked) tally.usage = { ...tally.usage, ...(await this.runs.ownRun(run.user_id, run.id)).usage };
    return tally;
  }

  /** The client left before the end: nobody can read the answer, so the run stops (it may have just finished). */
  private async abandon(run: Run): Promise<void> {
    await this.runs.cancel(run.user_id, run.id).catch((err: unknown) => {
      if (!(err instanceof ConflictError)) throw err;
    });
  }

  /** The question's inline images become the user's files (DESIGN §15), attached to the run like `image_ids`. */
  private async attach(userId: string, images: InlineImage[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [index, image] of images.entries()) {
      const bytes = this.decode(image);
      const file = await this.files.upload(userId, async () => ({ filename: `image-${index + 1}`, bytes })).catch((err: unknown) => {
        if (err instanceof ValidationError) throw new ValidationError(err.detail.map((issue) => ({ ...issue, loc: ['body', image.param] })));
        throw err instanceof UnsupportedMediaTypeError ? new UnsupportedMediaTypeError(`${image.param}: ${err.message}`) : err;
      });
      ids.push(file.id);
    }
    return ids;
  }

  private decode(image: InlineImage): Buffer {
    const header = DATA_URL.exec(image.url.slice(0, 256));
    if (!header) throw new BadRequestError('unsupported_parameter', 'an image must be sent inline as a base64 data: URL (data:image/png;base64,…); image URLs are not fetched', image.param);
    const encoded = image.url.length - header[0].length;
    if (Math.floor((encoded * 3) / 4) > this.files.maxUploadBytes) throw new PayloadTooLargeError(`${image.param}: the image is larger than ${this.files.maxUploadBytes} bytes (FILE_MAX_BYTES)`);
    return Buffer.from(image.url.slice(header[0].length), 'base64');
  }
}

/** A client tool named like one of the agent's (the engine's 422 on `client_tools`) is, on /v1, a 400 on `tools`. */
function clientToolClash(err: unknown): BadRequestError | undefined {
  const issue = err instanceof ValidationError ? err.detail.find((d) => d.loc[1] === 'client_tools') : undefined;
  const index = issue?.loc[2];
  return issue ? new BadRequestError('invalid_request', issue.msg.replace(/^Value error, /, ''), typeof index === 'number' ? `tools[${index}]` : 'tools') : undefined;
}

/**
 * Watches the request's connection: `signal` aborts when the client leaves before the response
 * has been written, or when `stop` is called (the stream is being ended by this process).
 */
function watchClient(ctx: AppContext) {
  const controller = new AbortController();
  let left = false;
  const onClose = () => {
    if (!ctx.res.writableFinished) left = true;
    controller.abort();
  };
  ctx.res.once('close', onClose);
  return {
    signal: controller.signal,
    clientLeft: () => left,
    stop: () => controller.abort(),
    dispose: () => ctx.res.off('close', onClose),
  };
}
