import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-server.js';

const NODES = 3;
const SLOTS = 16384;
const READY_TIMEOUT_MS = 15_000;

export interface ClusterOptions {
  /** Append-only file synced on every write (default), so a node survives its restart; off for benchmarks. */
  durable?: boolean;
}

/** One master of the throwaway cluster: its client port and its cluster-bus port (both free on 127.0.0.1). */
interface ClusterNode {
  port: number;
  busPort: number;
  process?: ChildProcess;
}

/**
 * A throwaway Redis Cluster of three `redis-server` masters on 127.0.0.1 (no replicas), each with an
 * append-only file synced on every write, so a node can be stopped and started again without a failover:
 * it comes back with its node id, its slots and its keys. The other masters keep serving their slots
 * meanwhile (cluster-require-full-coverage no).
 */
export class ThrowawayRedisCluster {
  private readonly dir = mkdtempSync(join(tmpdir(), 'ap-redis-cluster-'));

  private constructor(
    readonly nodes: ClusterNode[],
    private readonly durable: boolean,
  ) {}

  /** Starts one; ports are picked free but may be taken before redis-server binds them: then again, on new ports. */
  static async start(options: ClusterOptions = {}, attempts = 3): Promise<ThrowawayRedisCluster> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ThrowawayRedisCluster.startOnce(options.durable ?? true);
      } catch (err) {
        if (attempt >= attempts) throw err;
      }
    }
  }

  private static async startOnce(durable: boolean): Promise<ThrowawayRedisCluster> {
    const nodes: ClusterNode[] = [];
    for (let i = 0; i < NODES; i++) nodes.push({ port: await freePort(), busPort: await freePort() });
    const cluster = new ThrowawayRedisCluster(nodes, durable);
    try {
      await Promise.all(nodes.map((node) => cluster.launch(node)));
      await cluster.join();
      await cluster.waitUntilServing();
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
    return cluster;
  }

  /**
   * What `redis-cli --cluster create` does, without its pauses: each master gets a third of the
   * slots and its own config epoch, and the first one meets the others (gossip spreads the rest).
   */
  private async join(): Promise<void> {
    const clients = this.nodes.map((n) => new Redis(n.port, '127.0.0.1', { maxRetriesPerRequest: 1 }));
    try {
      const share = Math.ceil(SLOTS / this.nodes.length);
      await Promise.all(
        clients.map(async (client, i) => {
          await client.cluster('SET-CONFIG-EPOCH', i + 1);
          await client.call('CLUSTER', 'ADDSLOTSRANGE', i * share, Math.min(SLOTS, (i + 1) * share) - 1);
        }),
      );
      for (const node of this.nodes.slice(1)) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', node.port, node.busPort);
    } finally {
      for (const client of clients) client.disconnect();
    }
  }

  /** REDIS_CLUSTER_NODES for the processes. */
  get nodeList(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  /** The node serving a key's slot. */
  async nodeOf(key: string): Promise<number> {
    const client = new Redis(this.nodes[0]!.port, '127.0.0.1');
    try {
      const slot = (await client.cluster('KEYSLOT', key)) as number;
      const ranges = await client.cluster('SLOTS');
      const [, , master] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      return master![1];
    } finally {
      client.disconnect();
    }
  }

  /** SIGTERM one node: it flushes its append-only file and exits; its slots are unavailable until `resume`. */
  async stopNode(port: number): Promise<void> {
    const child = this.node(port).process;
    if (!child || child.exitCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  }

  async resumeNode(port: number): Promise<void> {
    await this.launch(this.node(port));
    await this.waitUntilServing();
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.stopNode(n.port)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private node(port: number): ClusterNode {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no cluster node on port ${port}`);
    return node;
  }

  private async launch(node: ClusterNode): Promise<void> {
    node.process = spawn(
      'redis-server',
      [
        '--port', String(node.port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-port', String(node.busPort),
        '--cluster-config-file', `nodes-${node.port}.conf`, '--cluster-node-timeout', '2000', '--cluster-require-full-coverage', 'no',
        '--save', '', '--dir', this.dir,
        ...(this.durable ? ['--appendonly', 'yes', '--appendfilename', `appendonly-${node.port}.aof`, '--appenddirname', `aof-${node.port}`, '--appendfsync', 'always'] : []),
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<never>((_, reject) => node.process!.once('exit', (code) => reject(new Error(`redis-server on ${node.port} exited (${code})`))));
    exited.catch(() => {});
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while ((await Promise.race([ping(node.port), exited])) !== 'PONG') {
      if (Date.now() > deadline) throw new Error(`redis-server on ${node.port} not answering after ${READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Every node sees the cluster whole (each node states its view; a restarted one needs a moment to rejoin). */
  private async waitUntilServing(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const states = await Promise.all(this.nodes.map((n) => clusterState(n.port)));
      if (states.every((s) => s === 'ok')) return;
      if (Date.now() > deadline) throw new Error(`cluster not ready after ${READY_TIMEOUT_MS} ms: ${states.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function ping(port: number): Promise<string> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.ping();
  } catch {
    return 'down';
  } finally {
    client.disconnect();
  }
}

async function clusterState(port: number): Promise<string> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    const info = (await client.cluster('INFO')) as string;
    return /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unknown';
  } catch {
    return 'down';
  } finally {
    client.disconnect();
  }
}
