import type { Knex } from 'knex';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { pageOf, type Page, type Pagination } from '../shared/pages.js';
import { inputAsStored, type DatasetItemRecord, type DatasetRecord, type NewItem } from './records.js';

interface DatasetRow { id: string; name: string; description: string; item_count: number; created_at: Date; updated_at: Date }
interface ItemRow { id: string; dataset_id: string; input: { q: string; image_ids?: string[] }; expected: unknown; metadata: Record<string, unknown>; created_at: Date; updated_at: Date }

const DATASET_COLUMNS = ['id', 'name', 'description', 'item_count', 'created_at', 'updated_at'];
const ITEM_COLUMNS = ['id', 'dataset_id', 'input', 'expected', 'metadata', 'created_at', 'updated_at'];

export const presentDataset = (row: DatasetRow): DatasetRecord => ({
  id: row.id, name: row.name, description: row.description, item_count: row.item_count, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});

export const presentItem = (row: ItemRow): DatasetItemRecord => ({
  id: row.id, dataset_id: row.dataset_id, input: row.input, expected: row.expected ?? null, metadata: row.metadata ?? {}, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/**
 * Datasets and their items (DESIGN §24), the user's own: another user's answers 404. A dataset holds
 * at most `maxItems` items (409 naming the limit); its `item_count` moves with each add and delete.
 */
export class DatasetService {
  constructor(
    private readonly knex: Knex,
    private readonly limits: { maxItems: number; perUser: number },
  ) {}

  /** A new dataset; at most DATASETS_PER_USER (creates racing at the limit are counted under a per-user lock). */
  async create(userId: string, input: { name: string; description?: string }): Promise<DatasetRecord> {
    return this.knex.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 24))', [`datasets:${userId}`]);
      const counted = await trx('datasets').where({ user_id: userId }).count({ n: '*' }).first();
      if (Number(counted?.n ?? 0) >= this.limits.perUser) {
        throw new ConflictError('dataset_limit', `You already have ${this.limits.perUser} datasets (DATASETS_PER_USER); delete one to make room`);
      }
      const [row] = await trx('datasets').insert({ user_id: userId, name: input.name, description: input.description ?? '' }).returning(DATASET_COLUMNS);
      return presentDataset(row);
    });
  }

  async list(userId: string, page: Pagination): Promise<Page<DatasetRecord>> {
    const [rows, counted] = await Promise.all([
      this.knex('datasets').where({ user_id: userId }).orderBy([{ column: 'created_at', order: 'desc' }, 'id']).limit(page.size).offset((page.page - 1) * page.size).select(DATASET_COLUMNS),
      this.knex('datasets').where({ user_id: userId }).count({ total: '*' }),
    ]);
    return pageOf(rows.map(presentDataset), Number(counted[0]?.total ?? 0), page);
  }

  async own(userId: string, id: string, trx: Knex = this.knex): Promise<DatasetRow> {
    const row = await trx('datasets').where({ id, user_id: userId }).first(DATASET_COLUMNS);
    if (!row) throw new NotFoundError('Dataset not found', 'Dataset');
    return row;
  }

  async get(userId: string, id: string): Promise<DatasetRecord> {
    return presentDataset(await this.own(userId, id));
  }

  async update(userId: string, id: string, change: { name?: string; description?: string }): Promise<DatasetRecord> {
    const [row] = await this.knex('datasets').where({ id, user_id: userId }).update({ ...change, updated_at: this.knex.fn.now() }).returning(DATASET_COLUMNS);
    if (!row) throw new NotFoundError('Dataset not found', 'Dataset');
    return presentDataset(row);
  }

  /** The dataset and its items; evals made from it keep their copies and results. */
  async remove(userId: string, id: string): Promise<void> {
    const deleted = await this.knex('datasets').where({ id, user_id: userId }).delete();
    if (deleted === 0) throw new NotFoundError('Dataset not found', 'Dataset');
  }

  /**
   * Adds items in the order given, all or none: the count is checked and raised under the dataset's
   * row lock. `rows` is the JSON list of the items as stored (src/evals/item-parse.ts), as UTF-8:
   * one parameter, so the event loop neither builds nor encodes a statement per item.
   */
  async addItems(userId: string, id: string, items: { rows: Uint8Array; count: number }): Promise<{ added: number; item_count: number; items: DatasetItemRecord[] }> {
    return this.knex.transaction(async (trx) => {
      const dataset = await trx('datasets').where({ id, user_id: userId }).forUpdate().first('id', 'item_count');
      if (!dataset) throw new NotFoundError('Dataset not found', 'Dataset');
      const after = dataset.item_count + items.count;
      if (after > this.limits.maxItems) {
        throw new ConflictError('dataset_full', `A dataset holds at most ${this.limits.maxItems} items (DATASET_MAX_ITEMS); it has ${dataset.item_count} and ${items.count} were sent`);
      }
      const rows = Buffer.from(items.rows.buffer, items.rows.byteOffset, items.rows.byteLength);
      // Only the first 100 come back: reading all of them would be the event loop's work again.
      const { rows: shown } = await trx.raw(
        `with added as (
           insert into dataset_items (dataset_id, input, expected, metadata)
           select ?, item->'input', item->'expected', item->'metadata'
           from jsonb_array_elements(convert_from(?::bytea, 'UTF8')::jsonb) with ordinality as sent(item, n) order by n
           returning ${ITEM_COLUMNS.join(', ')}, position
         )
         select ${ITEM_COLUMNS.join(', ')} from added order by position limit 100`,
        [id, rows],
      );
      await trx('datasets').where({ id }).update({ item_count: after, updated_at: trx.fn.now() });
      return { added: items.count, item_count: after, items: (shown as ItemRow[]).map(presentItem) };
    });
  }

  async listItems(userId: string, id: string, page: Pagination): Promise<Page<DatasetItemRecord>> {
    const dataset = await this.own(userId, id);
    const rows = await this.knex('dataset_items').where({ dataset_id: id }).orderBy('position').limit(page.size).offset((page.page - 1) * page.size).select(ITEM_COLUMNS);
    return pageOf(rows.map(presentItem), dataset.item_count, page);
  }

  private async ownItem(userId: string, id: string, itemId: string, trx: Knex = this.knex): Promise<ItemRow> {
    await this.own(userId, id, trx);
    const row = await trx('dataset_items').where({ id: itemId, dataset_id: id }).first(ITEM_COLUMNS);
    if (!row) throw new NotFoundError('Dataset item not found', 'DatasetItem');
    return row;
  }

  async getItem(userId: string, id: string, itemId: string): Promise<DatasetItemRecord> {
    return presentItem(await this.ownItem(userId, id, itemId));
  }

  async updateItem(userId: string, id: string, itemId: string, change: Partial<NewItem>): Promise<DatasetItemRecord> {
    await this.ownItem(userId, id, itemId);
    const [row] = await this.knex('dataset_items')
      .where({ id: itemId, dataset_id: id })
      .update({
        ...(change.input ? { input: JSON.stringify(inputAsStored(change.input)) } : {}),
        ...('expected' in change ? { expected: json(change.expected) } : {}),
        ...('metadata' in change ? { metadata: JSON.stringify(change.metadata ?? {}) } : {}),
        updated_at: this.knex.fn.now(),
      })
      .returning(ITEM_COLUMNS);
    if (!row) throw new NotFoundError('Dataset item not found', 'DatasetItem');
    return presentItem(row);
  }

  async removeItem(userId: string, id: string, itemId: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const dataset = await trx('datasets').where({ id, user_id: userId }).forUpdate().first('id');
      if (!dataset) throw new NotFoundError('Dataset not found', 'Dataset');
      const deleted = await trx('dataset_items').where({ id: itemId, dataset_id: id }).delete();
      if (deleted === 0) throw new NotFoundError('Dataset item not found', 'DatasetItem');
      await trx('datasets').where({ id }).update({ item_count: trx.raw('item_count - 1'), updated_at: trx.fn.now() });
    });
  }
}
