import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

function base62Fixed(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** An opaque random token (refresh tokens). */
export const randomToken = () => base62(randomBytes(32));

/**
 * API keys: `svc_` + 43 base62 characters of 32 random bytes + 6 base62 characters of a CRC32
 * over them (as GitHub's tokens do), so a mistyped or forged key is refused before any lookup.
 */
export const API_KEY_PREFIX = 'svc_';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

const checksum = (body: string) => base62Fixed(crc32(body), CHECKSUM_LENGTH);

export function generateApiKey(): string {
  const body = base62(randomBytes(32)).padStart(BODY_LENGTH, '0');
  return `${API_KEY_PREFIX}${body}${checksum(body)}`;
}

export function isWellFormedApiKey(key: string): boolean {
  if (!API_KEY_PATTERN.test(key)) return false;
  const body = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH);
  return constantTimeEqual(checksum(body), key.slice(-CHECKSUM_LENGTH));
}

export const looksLikeApiKey = (credential: string) => credential.startsWith(API_KEY_PREFIX);
export const apiKeyPrefix = (key: string) => key.slice(0, 8);
