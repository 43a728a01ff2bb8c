import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api';
import type { Session } from './session';

export interface ConsoleContext {
  session: Session;
  api: ApiClient;
  /** fetch with the session's token and its refresh-on-401 (streams and uploads, which the generated client does not cover). */
  authorizedFetch: (request: Request) => Promise<Response>;
}

export const Console = createContext<ConsoleContext | undefined>(undefined);

export function useConsole(): ConsoleContext {
  const context = useContext(Console);
  if (!context) throw new Error('useConsole outside the console');
  return context;
}
