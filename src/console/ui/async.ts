import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads data for a screen; reloads when `deps` change or on `reload()`. A stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) => mine === generation.current && setState({ error: asError(error), loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Runs an action from a button or form: `busy` while it runs, its error kept for display. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>): { run: (...args: A) => Promise<boolean>; busy: boolean; error: Error | undefined; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const run = async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      await action(...args);
      return true;
    } catch (err) {
      setError(asError(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
