import type { IncomingMessage } from 'node:http';
import { RequestTimeoutError } from '../shared/errors.js';

/**
 * Runs `read` (a reader of the request's body) under DESIGN §21's bound: when no byte of the body
 * arrives for `idleMs`, or the client goes away before sending it all, the read is given up (408)
 * and the request stops feeding it, so whatever the caller holds for it (an upload slot, buffers)
 * is returned as soon as the rejection unwinds. `read` must attach its own listeners synchronously.
 */
export async function boundedBodyRead<T>(req: IncomingMessage, idleMs: number, read: () => Promise<T>): Promise<T> {
  const reading = read();
  if (req.complete && req.readableEnded) return reading;
  let timer: NodeJS.Timeout | undefined;
  let giveUp!: (err: Error) => void;
  const given = new Promise<never>((_, reject) => (giveUp = reject));
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => giveUp(new RequestTimeoutError(`The request body sent nothing for ${idleMs} ms (BODY_IDLE_TIMEOUT_MS)`)), idleMs);
  };
  const onClose = () => {
    if (!req.complete) giveUp(new RequestTimeoutError('The client went away before sending the whole request body'));
  };
  // The reader reports an abort its own way too; this one only keeps an 'error' from going unhandled.
  const onError = () => onClose();
  req.on('data', arm);
  req.once('close', onClose);
  req.on('error', onError);
  arm();
  try {
    return await Promise.race([reading, given]);
  } catch (err) {
    if (err instanceof RequestTimeoutError) {
      req.unpipe();
      reading.catch(() => {});
    }
    throw err;
  } finally {
    clearTimeout(timer);
    req.off('data', arm);
    req.off('close', onClose);
    req.off('error', onError);
  }
}
