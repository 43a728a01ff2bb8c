import { pino, type Logger, type DestinationStream } from 'pino';

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
export type { Logger };
