import vm from 'node:vm';

/**
 * Synchronous work on a caller's input (a schema compiled, an answer validated, a pattern run)
 * stopped after `ms` (DESIGN §21): V8 interrupts it wherever it is, a backtracking regular
 * expression included. A watchdog thread per call costs tens of microseconds.
 */
export type Bounded<T> = { done: true; value: T } | { done: false };

const context = vm.createContext({ work: (): unknown => undefined, result: undefined as unknown });
const call = new vm.Script('result = work()');

export function withinTime<T>(ms: number, work: () => T): Bounded<T> {
  context.work = work;
  context.result = undefined;
  try {
    call.runInContext(context, { timeout: ms });
    return { done: true, value: context.result as T };
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { done: false };
    throw err;
  } finally {
    context.work = () => undefined;
    context.result = undefined;
  }
}
