import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Pglite {
  /** postgres://postgres@127.0.0.1:PORT/postgres, for `pg` or createKnex. */
  url: string;
  /** Stops the server; the database (in memory) is gone. */
  close(): Promise<void>;
}

const SERVER = fileURLToPath(new URL('./pglite-server.mjs', import.meta.url));

/**
 * A throwaway Postgres 18 (PGlite, WASM) with the `vector` (pgvector 0.8) and `cube` extensions
 * available, in a child process (test/support/pglite-server.mjs). Starts in ~1 s (~2.5 s the first
 * time on a machine, while it caches its initdb result in the temp dir).
 *
 * It is ONE Postgres session shared by every connection: any pool size works, connections take
 * turns (a transaction keeps the session until it ends), but SET, temp tables, session advisory
 * locks, LISTEN and prepared statement names are shared, `statement_timeout` never fires and a
 * query waiting behind an open transaction on another connection waits until it ends.
 */
export async function startPglite(): Promise<Pglite> {
  const child = fork(SERVER, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (message: { port: number }) => resolve(message.port));
      child.once('error', reject);
      void exited.then(() => reject(new Error(`pglite-server exited (${child.exitCode ?? child.signalCode}) before listening`)));
    });
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      close: async () => {
        child.kill('SIGTERM');
        await exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
