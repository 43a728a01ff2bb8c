import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits for a condition another process makes true (a row a worker writes after an event the
 * test already saw): checks it again every `everyMs` until it holds, failing after `timeoutMs`.
 */
export async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, { timeoutMs = 20_000, everyMs = 50 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
