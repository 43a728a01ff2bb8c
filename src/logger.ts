import { pino, type Logger, type DestinationStream } from 'pino';
import pretty, { prettyFactory } from 'pino-pretty';

export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      // Belt and braces: nothing logs credentials, but if a field ever carries one it is masked.
      redact: ['*.authorization', '*.password', '*.token', '*.key', '*.refresh_token', '*.access_token'],
    },
    destination,
  );
}

/** Human-readable lines on stdout (`LOG_FORMAT=pretty`, and `npm start` unless `LOG_FORMAT=json`). */
export function prettyDestination(): DestinationStream {
  return pretty({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/** One JSON log line as human-readable text (no trailing newline), for `npm start`'s relay of its children's logs. */
export function prettyLineFormatter(): (line: string) => string {
  const format = prettyFactory({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return (line) => format(line).replace(/\n$/, '');
}

/** The ids every log line of a run carries (DESIGN §12), besides the request id that started it. */
export function runLogFields(run: { id: string; conversation_id: string; user_id: string }) {
  return { run_id: run.id, conversation_id: run.conversation_id, user_id: run.user_id };
}
export type { Logger };
