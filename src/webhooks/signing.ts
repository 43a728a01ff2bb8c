import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (DESIGN §10): `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">` under the endpoint's secret `whsec_<base64 key>`. Several space-separated
 * signatures are allowed; during a secret rotation both secrets sign.
 */
const SECRET_PREFIX = 'whsec_';

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt. */
export function webhookHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(' '),
  };
}
