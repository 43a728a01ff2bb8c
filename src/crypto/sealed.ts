import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets the platform must use again (connector headers) are sealed at rest (DESIGN §8): AES-256-GCM with a key
 * derived from ENCRYPTION_KEY by HKDF-SHA256, a random 96-bit IV per value, and the value's context (which row and
 * field it belongs to) as associated data, so a sealed value copied elsewhere in the database does not open.
 *
 * Layout, base64 in the database: [key id: 1 byte][IV: 12 bytes][ciphertext][GCM tag: 16 bytes].
 * The key id is derived from the key itself, so no extra setting names the version: during a rotation
 * ENCRYPTION_KEY_PREVIOUS opens what the old key sealed, and `agentctl secrets:rotate` re-seals it with the new one.
 */

const SALT = Buffer.from('agent-platform/sealed');
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedValueError extends Error {}

interface SealingKey {
  id: number;
  key: Buffer;
}

function deriveKey(secret: string): SealingKey {
  const key = Buffer.from(hkdfSync('sha256', secret, SALT, 'aes-256-gcm key', 32));
  const id = Buffer.from(hkdfSync('sha256', secret, SALT, 'key id', 1)).readUInt8(0);
  return { id, key };
}

export class Sealer {
  private readonly current: SealingKey;
  private readonly previous?: SealingKey;

  constructor(secret: string, previousSecret?: string) {
    this.current = deriveKey(secret);
    this.previous = previousSecret ? deriveKey(previousSecret) : undefined;
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([this.current.id]), iv, body, cipher.getAuthTag()]).toString('base64');
  }

  open(sealed: string, context: string): string {
    const bytes = Buffer.from(sealed, 'base64');
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES) throw new SealedValueError('sealed value is truncated');
    // Two keys may share an id byte (1 in 256); the tag then tells which one sealed it.
    for (const candidate of this.keysFor(bytes.readUInt8(0))) {
      const opened = this.tryOpen(candidate.key, bytes, context);
      if (opened !== undefined) return opened;
    }
    throw new SealedValueError('sealed value does not open with ENCRYPTION_KEY or ENCRYPTION_KEY_PREVIOUS');
  }

  /** Whether the value is sealed with the current key (what rotation leaves behind). */
  isCurrent(sealed: string, context: string): boolean {
    const bytes = Buffer.from(sealed, 'base64');
    return bytes[0] === this.current.id && this.tryOpen(this.current.key, bytes, context) !== undefined;
  }

  /** Opens with either key and seals with the current one. */
  reseal(sealed: string, context: string): string {
    return this.seal(this.open(sealed, context), context);
  }

  private keysFor(id: number): SealingKey[] {
    return [this.current, this.previous].filter((k): k is SealingKey => k !== undefined && k.id === id);
  }

  private tryOpen(key: Buffer, bytes: Buffer, context: string): string | undefined {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
