import type { Knex } from 'knex';

/** `original`: the bytes uploaded; `model`: the copy a model is sent when the original is too large (DESIGN §15). */
export type Variant = 'original' | 'model';

/**
 * Where files' bytes live, apart from their records: Postgres by default; object storage can
 * implement the same three calls. `put` runs inside the transaction that records the file, so
 * a store in the same database commits with it.
 */
export interface FileStorage {
  put(trx: Knex.Transaction, fileId: string, variants: Partial<Record<Variant, Buffer>>): Promise<void>;
  get(fileId: string, variant: Variant): Promise<Buffer | undefined>;
  /** After the file's record is gone. */
  remove(fileId: string): Promise<void>;
}

/** Bytes in `file_blobs`, one row per variant, deleted with their file's row. */
export class PostgresFileStorage implements FileStorage {
  constructor(private readonly knex: Knex) {}

  async put(trx: Knex.Transaction, fileId: string, variants: Partial<Record<Variant, Buffer>>): Promise<void> {
    const rows = Object.entries(variants).map(([variant, bytes]) => ({ file_id: fileId, variant, bytes }));
    if (rows.length > 0) await trx('file_blobs').insert(rows);
  }

  async get(fileId: string, variant: Variant): Promise<Buffer | undefined> {
    const row = await this.knex('file_blobs').first('bytes').where({ file_id: fileId, variant });
    return row?.bytes as Buffer | undefined;
  }

  async remove(fileId: string): Promise<void> {
    await this.knex('file_blobs').where({ file_id: fileId }).delete();
  }
}
