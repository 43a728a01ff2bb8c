// An in-memory PGlite (Postgres 18 compiled to WASM) with pgvector and cube, served over TCP on
// 127.0.0.1 (port chosen by the OS) to ordinary `pg` clients. test/support/pglite.ts runs it as a child
// process, so the WASM engine (synchronous while a statement runs) never blocks the test's event loop.
// Tells the parent its port over IPC; exits on SIGTERM/SIGINT or when the parent goes away.
//
// PGlite is ONE Postgres session. Any number of connections are accepted and take turns on it: a
// connection keeps the session from its first message until Postgres is idle again (ReadyForQuery
// 'I'), so a Parse/Bind/Execute/Sync sequence or a whole transaction is never interleaved with another
// connection's. (pglite-socket's own multiplexer interleaves single messages: a Bind arriving in a later
// TCP read can bind another connection's unnamed statement.) Session state — SET, temp tables, session
// advisory locks, LISTEN, prepared statement names — is still shared by all connections.
import { PGlite } from '@electric-sql/pglite';
import { cube } from '@electric-sql/pglite/contrib/cube';
import { vector } from '@electric-sql/pglite-pgvector';
import { rename, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

const db = await createDatabase();

// The session: who holds it, and the connections waiting for it in order.
let holder = null;
const waiting = [];
function acquire(socket) {
  if (holder === socket) return;
  if (holder === null) return void (holder = socket);
  return new Promise((resolve) => waiting.push({ socket, resolve }));
}
function release(socket) {
  if (holder !== socket) return;
  const next = waiting.shift();
  holder = next?.socket ?? null;
  next?.resolve();
}

function serve(socket) {
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  let started = false;
  let turn = Promise.resolve(); // this connection's batches, in arrival order

  socket.on('data', (data) => {
    buffer = Buffer.concat([buffer, data]);
    const messages = [];
    let terminate = false;
    for (;;) {
      if (!started && buffer.length >= 8) {
        const length = buffer.readInt32BE(0);
        const code = buffer.readInt32BE(4);
        if (code === SSL_REQUEST) {
          socket.write('N');
          buffer = buffer.subarray(8);
          continue;
        }
        if (code === CANCEL_REQUEST) return void socket.destroy(); // nothing to cancel: statements run to the end
        if (buffer.length < length) break;
        started = true;
        messages.push(buffer.subarray(0, length)); // the startup message
        buffer = buffer.subarray(length);
      } else if (started && buffer.length >= 5) {
        const length = 1 + buffer.readInt32BE(1);
        if (buffer.length < length) break;
        if (buffer[0] === 0x58) { terminate = true; break; } // Terminate: the client is done
        messages.push(buffer.subarray(0, length));
        buffer = buffer.subarray(length);
      } else break;
    }
    if (messages.length > 0) turn = turn.then(() => run(socket, messages)).catch(fail);
    if (terminate) turn = turn.then(() => socket.end());
  });
  const fail = (error) => {
    console.error('pglite-server:', error);
    socket.destroy();
  };
  socket.on('error', () => {}); // a client going away mid-write; 'close' follows
  socket.on('close', () => {
    turn = turn.then(async () => {
      if (holder !== socket) return;
      // Gone mid-sequence or mid-transaction: end what it left open before the next connection's turn.
      await db.execProtocolRaw(SYNC);
      if (db.isInTransaction()) await db.exec('rollback');
      release(socket);
    }).catch(fail);
  });
}

async function run(socket, messages) {
  await acquire(socket);
  let tail = Buffer.alloc(0); // the last bytes sent back: ends with ReadyForQuery once Postgres is idle
  for (const message of messages) {
    if (socket.destroyed) break;
    await db.execProtocolRawStream(new Uint8Array(message), {
      onRawData: (data) => {
        if (!socket.destroyed) socket.write(Buffer.from(data));
        tail = Buffer.concat([tail, data]).subarray(-6);
      },
    });
  }
  const idle = tail.length === 6 && tail[0] === 0x5a && tail.readInt32BE(1) === 5 && tail[5] === 0x49; // ReadyForQuery 'I'
  if (idle && !socket.destroyed) release(socket); // else it keeps the session: a closed one is cleaned up by 'close'
}

/** A fresh database: initdb takes ~2 s in WASM, so its result is kept in the temp dir (~4.5 MB) and loaded next time (~0.7 s). */
async function createDatabase() {
  const options = { extensions: { vector, cube } };
  const engine = await stat(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  const snapshot = join(tmpdir(), `pglite-datadir-${engine.size}-${Math.floor(engine.mtimeMs)}.tar.gz`);
  const saved = await readFile(snapshot).catch(() => undefined);
  if (saved) return PGlite.create('memory://', { ...options, loadDataDir: new Blob([saved]) });
  const fresh = await PGlite.create('memory://', options);
  const partial = `${snapshot}.${process.pid}`;
  await writeFile(partial, Buffer.from(await (await fresh.dumpDataDir('gzip')).arrayBuffer()))
    .then(() => rename(partial, snapshot)) // atomic: other servers starting now read the whole file or none
    .catch((error) => console.error('pglite-server: cannot cache the initdb result:', error.message));
  return fresh;
}

const server = createServer(serve);
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.close();
  await db.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
