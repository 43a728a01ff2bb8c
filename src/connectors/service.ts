import { randomUUID } from 'node:crypto';
import { findOwned, listOwned } from '../db/owned.js';
import type { Pagination } from '../http/validation.js';
import type { Knex } from 'knex';
import type { Models } from '../db/models.js';
import type { Connector } from '../db/connector-models.js';
import type { Sealer } from '../crypto/sealed.js';
import { NotFoundError, RateLimitedError, ValidationError } from '../shared/errors.js';
import { hostOf, OutboundClient, type OutboundPolicy } from '../net/outbound.js';
import { bounded, describeConnectorError, MAX_RESPONSE_BYTES, McpSession, type ConnectorTransport } from './mcp.js';
import { MAX_HEADERS, openHeaders, patchSealedHeaders, sealHeaders } from './secrets.js';
import { toolPrefix } from './tool-names.js';
import { SYSTEM_ACTOR, type Actor, type AuditEntry, type AuditLog } from '../audit/log.js';
import { presentConnector, type ConnectorTestResult } from './records.js';

export interface ConnectorFields {
  name: string;
  kind: 'mcp';
  url: string;
  transport: ConnectorTransport;
  description: string;
  is_active: boolean;
  headers: Record<string, string>;
}

export interface ConnectorPatch extends Partial<Omit<ConnectorFields, 'headers'>> {
  headers?: Record<string, string | null>;
}

export interface ConnectorOptions {
  outbound: OutboundPolicy;
  timeoutMs: number;
}

/** Connector tests in flight at once, per web process and per user; more answer 429. */
const TESTS_PER_PROCESS = 16;
const TESTS_PER_USER = 2;

const UNIQUE_VIOLATION = '23505';

function duplicateName(name: string): ValidationError {
  return new ValidationError([
    { loc: ['body', 'name'], msg: `Value error, you already have a connector named like "${name}" (names compare as tool prefixes, ignoring case)`, type: 'value_error', input: name },
  ]);
}

function tooManyHeaders(count: number): ValidationError {
  return new ValidationError([{ loc: ['body', 'headers'], msg: `Value error, a connector has at most ${MAX_HEADERS} headers (this would have ${count})`, type: 'value_error' }]);
}

/** An audit entry about a connector: its name, where it points and which headers it has, never their values. */
function connectorEntry(action: AuditEntry['action'], connector: Pick<Connector, 'id' | 'user_id' | 'name'>, details: Record<string, unknown> = {}): AuditEntry {
  return { action, targetType: 'connector', targetId: connector.id, details: { user_id: connector.user_id, name: connector.name, ...details } };
}

/** Connectors: ownership, sealed headers, and the connection test. Routes go through it. */
export class ConnectorService {
  private readonly testsInFlight = new Map<string, number>();
  private testsTotal = 0;

  constructor(
    private readonly knex: Knex,
    private readonly models: Models,
    private readonly sealer: Sealer,
    private readonly options: ConnectorOptions,
    private readonly audit: AuditLog,
  ) {}

  list(userId: string, page: Pagination) {
    return listOwned(this.models.Connector, userId, page, presentConnector);
  }

  own(userId: string, id: string): Promise<Connector> {
    return findOwned(this.models.Connector, userId, id, 'Connector');
  }

  async create(userId: string, fields: ConnectorFields, actor: Actor = SYSTEM_ACTOR): Promise<Connector> {
    const { headers, ...rest } = fields;
    const id = randomUUID();
    const details = { kind: fields.kind, transport: fields.transport, host: hostOf(fields.url), header_names: Object.keys(headers) };
    return await this.uniqueName(fields.name, () =>
      this.audit.transaction(actor, async (trx) => {
        const created = await this.models.Connector.query(trx).insertAndFetch({ ...rest, id, user_id: userId, tool_prefix: toolPrefix(fields.name), secret_headers: sealHeaders(this.sealer, id, headers) });
        return { result: created, entries: [connectorEntry('connector.create', created, details)] };
      }),
    );
  }

  /** Changes a connector the caller loaded with `own`. A new address or new headers make its last test stale. */
  async update(connector: Connector, patch: ConnectorPatch, actor: Actor = SYSTEM_ACTOR): Promise<Connector> {
    const { headers, ...rest } = patch;
    const changes: Partial<Connector> = { ...rest, updated_at: new Date() };
    if (patch.name !== undefined) changes.tool_prefix = toolPrefix(patch.name);
    if (headers !== undefined) {
      changes.secret_headers = patchSealedHeaders(this.sealer, connector.id, connector.secret_headers, headers);
      const count = Object.keys(changes.secret_headers).length;
      if (count > MAX_HEADERS) throw tooManyHeaders(count);
    }
    const reaches = (patch.url !== undefined && patch.url !== connector.url) || (patch.transport !== undefined && patch.transport !== connector.transport) || headers !== undefined;
    if (reaches) Object.assign(changes, { status: 'unknown', last_error: null, last_checked_at: null, tools: [] });
    const details = {
      fields: Object.keys(patch).filter((field) => patch[field as keyof ConnectorPatch] !== undefined),
      ...(patch.url !== undefined && { host: { from: hostOf(connector.url), to: hostOf(patch.url) } }),
      ...(headers !== undefined && { header_names: Object.keys(headers) }),
    };
    return await this.uniqueName(patch.name ?? connector.name, () =>
      this.audit.transaction(actor, async (trx) => {
        const updated = await connector.$query(trx).patchAndFetch(changes);
        return { result: updated, entries: [connectorEntry('connector.update', updated, details)] };
      }),
    );
  }

  /** Deletes the connector and takes it off every agent that lists it, in one transaction. */
  async remove(userId: string, id: string, actor: Actor = SYSTEM_ACTOR): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const [deleted] = await trx('connectors').where({ id, user_id: userId }).delete().returning(['id', 'user_id', 'name']);
      if (!deleted) throw new NotFoundError('Connector not found');
      await this.audit.record(actor, connectorEntry('connector.delete', deleted), trx);
      await trx('agents')
        .where({ user_id: userId })
        .whereRaw('connector_ids \\? ?', [id])
        .update({ connector_ids: trx.raw('connector_ids - ?::text', [id]), updated_at: trx.fn.now() });
    });
  }

  /** The ids among `ids` that are not connectors of this user. */
  async foreign(userId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const owned = await this.models.Connector.query().select('id').where({ user_id: userId }).whereIn('id', ids);
    const mine = new Set(owned.map((c) => c.id));
    return ids.filter((id) => !mine.has(id));
  }

  /**
   * Connects to the server, lists its tools and records the outcome on the connector. An unreachable, refused, slow
   * or broken server is `status: "error"` with the reason, never an exception; the whole test is bounded by the
   * connector timeout.
   */
  async test(userId: string, id: string): Promise<ConnectorTestResult> {
    const connector = await this.own(userId, id);
    const release = this.admitTest(userId);
    try {
      const result = await this.probe(connector);
      await this.record(connector, result);
      return result;
    } finally {
      release();
    }
  }

  private async probe(connector: Connector): Promise<ConnectorTestResult> {
    const headers = openHeaders(this.sealer, connector.id, connector.secret_headers);
    const outbound = new OutboundClient(this.options.outbound, { maxResponseBytes: MAX_RESPONSE_BYTES });
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    let session: McpSession | undefined;
    try {
      const target = { url: connector.url, transport: connector.transport, headers };
      session = await McpSession.open(target, { fetch: outbound.fetch, timeoutMs: this.options.timeoutMs, signal: deadline });
      const tools = await bounded(session.listTools({ timeoutMs: this.options.timeoutMs, signal: deadline }), this.options.timeoutMs, deadline);
      return { status: 'ok', tools, latency_ms: latency() };
    } catch (err) {
      const reason = deadline.aborted ? `timed out after ${this.options.timeoutMs} ms` : describeConnectorError(err, Object.values(headers));
      return { status: 'error', tools: [], error: reason, latency_ms: latency() };
    } finally {
      await session?.close();
      await outbound.close().catch(() => {});
    }
  }

  /** Stores the outcome unless the connector was changed or deleted meanwhile (then it describes a server no longer configured). */
  private async record(tested: Connector, result: ConnectorTestResult): Promise<void> {
    const outcome = {
      status: result.status,
      last_error: result.error ?? null,
      last_checked_at: new Date(),
      tools: JSON.stringify(result.status === 'ok' ? result.tools : tested.tools),
    };
    await this.knex('connectors')
      .where({ id: tested.id, url: tested.url, transport: tested.transport })
      .whereRaw('secret_headers = ?::jsonb', [JSON.stringify(tested.secret_headers)])
      .update(outcome);
  }

  private admitTest(userId: string): () => void {
    const mine = this.testsInFlight.get(userId) ?? 0;
    if (mine >= TESTS_PER_USER || this.testsTotal >= TESTS_PER_PROCESS) {
      throw new RateLimitedError('Too many connector tests are in progress; retry shortly', 1);
    }
    this.testsInFlight.set(userId, mine + 1);
    this.testsTotal += 1;
    return () => {
      this.testsTotal -= 1;
      const left = (this.testsInFlight.get(userId) ?? 1) - 1;
      if (left > 0) this.testsInFlight.set(userId, left);
      else this.testsInFlight.delete(userId);
    };
  }

  private async uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      const pgError = err as { code?: string; constraint?: string; nativeError?: { code?: string; constraint?: string } };
      const code = pgError.nativeError?.code ?? pgError.code;
      const constraint = pgError.nativeError?.constraint ?? pgError.constraint;
      if (code === UNIQUE_VIOLATION && constraint === 'connectors_user_prefix_unique') throw duplicateName(name);
      throw err;
    }
  }
}
