/**
 * Link passwords (CONTRACT §8.3). A password is stored only as a salted scrypt hash
 * (node:crypto, run on libuv's thread pool so the event loop keeps serving), in the form
 *
 *     scrypt$N=32768,r=8,p=1$<salt, base64>$<hash, base64>
 *
 * The parameters travel with each hash, so they can be raised later: old hashes still verify
 * with the parameters they were made with (`needsRehash` tells which ones to renew).
 *
 * Both sides normalise the password to NFC first, so "é" typed as one code point or as "e"
 * and a combining accent (as some keyboards and systems send it) is the same password.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { DomainError, ErrorCode, invalid } from '../errors.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 200;

/** The cost of a hash: N (CPU and memory, a power of two), r (block size), p (parallelism). */
export interface ScryptParameters {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/**
 * 2^15 × 8: 32 MiB and some tens of milliseconds a hash, twice Node's default cost. A redirect
 * checks one password per form post, and wrong guesses are rate limited per link and address
 * (RATE_LIMIT_PASSWORD), so this guards stolen hashes without letting four concurrent checks
 * (libuv's default pool) take more than 128 MiB.
 */
export const SCRYPT_PARAMETERS: ScryptParameters = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

const SALT_BYTES = 16;
const HASH_BYTES = 32;
// What a stored value may ask for. A value outside these is not one this code wrote, and
// verifying it must not cost unbounded memory or time.
const MAX_MEMORY = 256 * 1024 * 1024;
const MAX_P = 16;
const STORED = /^scrypt\$N=([0-9]{1,8}),r=([0-9]{1,3}),p=([0-9]{1,3})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * A new password: 8–200 code points of well-formed text without control characters (a form's
 * password field cannot send those, so such a password could never be entered). Answers the
 * password as given; an empty value meaning "none" is the caller's to handle first.
 */
export function parsePassword(raw: string): string {
  if (!raw.isWellFormed()) throw invalid('password must be well-formed Unicode text');
  if (CONTROL.test(raw)) throw invalid('password must not contain control characters');
  const length = codePoints(raw);
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw invalid(`password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long`);
  }
  return raw;
}

/** Bytes scrypt allocates for these parameters (OpenSSL's 128·r·(N + p + 2)), with room to spare. */
function memoryFor({ N, r, p }: ScryptParameters): number {
  return 128 * r * (N + p + 2) + 1024 * 1024;
}

/**
 * Hashes run on libuv's pool (four threads by default), which DNS lookups and file reads
 * share. At most HASHES_AT_ONCE run together and HASH_QUEUE_MAX wait: a burst of guesses
 * (100 at once measured 11-16 s of pool time, most of it for requests already answered 503)
 * is refused at the door with a 429 instead of queueing work nobody waits for.
 */
export const HASHES_AT_ONCE = 2;
export const HASH_QUEUE_MAX = 32;
let running = 0;
const waiting: (() => void)[] = [];

function busy(): DomainError {
  return new DomainError(ErrorCode.RateLimited, 'too many passwords are being checked; try again in 1 s', { retryAfter: 1 });
}

async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running < HASHES_AT_ONCE) running++;
  else if (waiting.length >= HASH_QUEUE_MAX) throw busy();
  else await new Promise<void>((resolve) => waiting.push(resolve)); // the slot is handed over
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next === undefined) running--;
    else next();
  }
}

function derive(password: string, salt: Buffer, length: number, parameters: ScryptParameters): Promise<Buffer> {
  const options: ScryptOptions = { N: parameters.N, r: parameters.r, p: parameters.p, maxmem: memoryFor(parameters) };
  return withHashSlot(() => new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => (error === null ? resolve(key) : reject(error)));
  }));
}

/** The stored form of a password: a fresh 16-byte salt, and the parameters it was hashed with. */
export async function hashPassword(password: string, parameters: ScryptParameters = SCRYPT_PARAMETERS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, HASH_BYTES, parameters);
  const { N, r, p } = parameters;
  return `scrypt$N=${N},r=${r},p=${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

interface StoredHash {
  readonly parameters: ScryptParameters;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

function readStored(stored: string): StoredHash | undefined {
  const match = STORED.exec(stored);
  if (match === null) return undefined;
  const [, n, r, p, salt, hash] = match as unknown as [string, string, string, string, string, string];
  const parameters = { N: Number(n), r: Number(r), p: Number(p) };
  const powerOfTwo = parameters.N >= 2 && (parameters.N & (parameters.N - 1)) === 0;
  if (!powerOfTwo || parameters.r < 1 || parameters.p < 1 || parameters.p > MAX_P || memoryFor(parameters) > MAX_MEMORY) return undefined;
  const saltBytes = Buffer.from(salt, 'base64');
  const hashBytes = Buffer.from(hash, 'base64');
  if (saltBytes.length < 8 || hashBytes.length < 16 || hashBytes.length > 64) return undefined;
  return { parameters, salt: saltBytes, hash: hashBytes };
}

/**
 * Whether `password` is the one `stored` was made from, hashing it with the salt and
 * parameters recorded there and comparing in constant time. A stored value this code could
 * not have written answers false; the only throw is the 429 of too many checks at once.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = typeof stored === 'string' ? readStored(stored) : undefined;
  if (parsed === undefined || typeof password !== 'string') return false;
  let candidate: Buffer;
  try {
    candidate = await derive(password, parsed.salt, parsed.hash.length, parsed.parameters);
  } catch (error) {
    // Too many checks at once is the caller's 429, not a wrong password.
    if (error instanceof DomainError) throw error;
    return false;
  }
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * True when `stored` was hashed with other parameters than today's (or is unreadable): after
 * a right password, the caller may store `hashPassword(password)` in its place.
 */
export function needsRehash(stored: string, parameters: ScryptParameters = SCRYPT_PARAMETERS): boolean {
  const parsed = readStored(stored);
  return parsed === undefined || parsed.parameters.N !== parameters.N || parsed.parameters.r !== parameters.r
    || parsed.parameters.p !== parameters.p;
}
