import { describe, expect, it } from 'vitest';
import { Sealer, SealedValueError } from '../src/crypto/sealed.js';

const OLD = 'old-encryption-key-old-encryption-key-0001';
const NEW = 'new-encryption-key-new-encryption-key-0002';
const SECRET = 'Bearer sk-abcdef0123456789';

describe('sealed values (AES-256-GCM, HKDF-derived key, key id byte)', () => {
  it('round-trips, with a fresh IV each time and no trace of the plaintext', () => {
    const sealer = new Sealer(NEW);
    const a = sealer.seal(SECRET, 'connector:1:header:authorization');
    const b = sealer.seal(SECRET, 'connector:1:header:authorization');
    expect(a).not.toBe(b);
    for (const sealed of [a, b]) {
      expect(sealer.open(sealed, 'connector:1:header:authorization')).toBe(SECRET);
      expect(sealed).not.toContain('sk-abcdef');
      expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain('sk-abcdef');
      // key id + 96-bit IV + ciphertext + 128-bit tag
      expect(Buffer.from(sealed, 'base64').length).toBe(1 + 12 + Buffer.byteLength(SECRET) + 16);
    }
    expect(sealer.seal('', 'c')).not.toBe('');
    expect(sealer.open(sealer.seal('', 'c'), 'c')).toBe('');
  });

  it('does not open in another context, tampered, truncated, or under another key', () => {
    const sealer = new Sealer(NEW);
    const sealed = sealer.seal(SECRET, 'connector:1:header:authorization');
    expect(() => sealer.open(sealed, 'connector:2:header:authorization')).toThrow(SealedValueError);
    const bytes = Buffer.from(sealed, 'base64');
    bytes[20] = (bytes[20] ?? 0) ^ 1;
    expect(() => sealer.open(bytes.toString('base64'), 'connector:1:header:authorization')).toThrow(SealedValueError);
    expect(() => sealer.open(sealed.slice(0, 20), 'connector:1:header:authorization')).toThrow(/truncated/);
    expect(() => new Sealer(OLD).open(sealed, 'connector:1:header:authorization')).toThrow(/does not open with ENCRYPTION_KEY or ENCRYPTION_KEY_PREVIOUS/);
  });

  it('during a rotation the previous key still opens old values, and reseal moves them to the new key', () => {
    const old = new Sealer(OLD).seal(SECRET, 'ctx');
    const rotating = new Sealer(NEW, OLD);
    expect(rotating.open(old, 'ctx')).toBe(SECRET);
    expect(rotating.isCurrent(old, 'ctx')).toBe(false);
    const resealed = rotating.reseal(old, 'ctx');
    expect(rotating.isCurrent(resealed, 'ctx')).toBe(true);
    expect(new Sealer(NEW).open(resealed, 'ctx')).toBe(SECRET);
    expect(() => new Sealer(OLD).open(resealed, 'ctx')).toThrow(SealedValueError);
  });
});
