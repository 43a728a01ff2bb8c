import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A well-behaved client: a 429 is tried again after its Retry-After, as the API asks (DESIGN §12),
 * a bounded number of times. Tests that load the platform on purpose send through this, so a busy
 * moment on a shared machine slows them down instead of failing them; a 503 or 500 still fails.
 */
export async function politely<T extends { status: number; headers: Headers }>(send: () => Promise<T>, attempts = 30): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const res = await send();
    if (res.status !== 429 || attempt >= attempts) return res;
    await sleep(1000 * (Number(res.headers.get('retry-after')) || 1));
  }
}
