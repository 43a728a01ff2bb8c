import type { Knex } from 'knex';
import { NotFoundError } from '../shared/errors.js';
import { pageOf, type Page, type Pagination } from '../shared/pages.js';
import type { Actor, AuditLog } from '../audit/log.js';
import type { ModelPrice } from './records.js';

export interface Prices {
  input_per_million: number;
  output_per_million: number;
}

interface PriceRow {
  model: string;
  input_per_million: string;
  output_per_million: string;
  updated_at: Date;
}

/** numeric comes back from Postgres as text. */
const present = (row: PriceRow): ModelPrice => ({
  model: row.model,
  input_per_million: Number(row.input_per_million),
  output_per_million: Number(row.output_per_million),
  updated_at: row.updated_at.toISOString(),
});

const COLUMNS = ['model', 'input_per_million', 'output_per_million', 'updated_at'];

/**
 * What models cost per million tokens (DESIGN §18), set by administrators. A run's cost is fixed
 * from these when it ends (src/engine/run-store.ts), so a change applies to runs that end after
 * it. Each change and its audit entry are one transaction.
 */
export class ModelPriceService {
  constructor(
    private readonly knex: Knex,
    private readonly audit: AuditLog,
  ) {}

  /** By model name. */
  async list(pagination: Pagination): Promise<Page<ModelPrice>> {
    const { page, size } = pagination;
    const [rows, [{ count }]] = await Promise.all([
      this.knex('model_prices').select(COLUMNS).orderBy('model').limit(size).offset((page - 1) * size),
      this.knex('model_prices').count({ count: '*' }) as unknown as Promise<[{ count: string }]>,
    ]);
    return pageOf((rows as PriceRow[]).map(present), Number(count), pagination);
  }

  async get(model: string): Promise<ModelPrice> {
    const row = await this.knex('model_prices').select(COLUMNS).where({ model }).first();
    if (!row) throw new NotFoundError(`No price is set for model "${model}"`, 'ModelPrice');
    return present(row as PriceRow);
  }

  /**
   * Creates or replaces a model's price; `created` tells which. The row is locked (or inserted)
   * before it is changed, so the audit entry's `from` is the price this change replaced, even when
   * two administrators set the same model at once.
   */
  async set(model: string, prices: Prices, actor: Actor): Promise<{ price: ModelPrice; created: boolean }> {
    return this.audit.transaction(actor, async (trx) => {
      for (;;) {
        const before = (await trx('model_prices').select(COLUMNS).where({ model }).forUpdate().first()) as PriceRow | undefined;
        let row: PriceRow | undefined;
        if (before) {
          [row] = (await trx('model_prices').update({ ...prices, updated_at: trx.fn.now() }).where({ model }).returning(COLUMNS)) as PriceRow[];
        } else {
          // Another administrator may create it first: then lock theirs and replace it.
          [row] = (await trx('model_prices').insert({ model, ...prices }).onConflict('model').ignore().returning(COLUMNS)) as PriceRow[];
          if (!row) continue;
        }
        const price = present(row!);
        const details = {
          model,
          ...(before ? { from: { input_per_million: Number(before.input_per_million), output_per_million: Number(before.output_per_million) } } : {}),
          to: { input_per_million: price.input_per_million, output_per_million: price.output_per_million },
        };
        return { result: { price, created: !before }, entries: [{ action: 'model_price.set' as const, targetType: 'model_price' as const, targetId: model, details }] };
      }
    });
  }

  async remove(model: string, actor: Actor): Promise<void> {
    await this.audit.transaction(actor, async (trx) => {
      const [row] = (await trx('model_prices').where({ model }).delete().returning(COLUMNS)) as PriceRow[];
      if (!row) throw new NotFoundError(`No price is set for model "${model}"`, 'ModelPrice');
      const details = { model, input_per_million: Number(row.input_per_million), output_per_million: Number(row.output_per_million) };
      return { result: undefined, entries: [{ action: 'model_price.delete' as const, targetType: 'model_price' as const, targetId: model, details }] };
    });
  }
}
