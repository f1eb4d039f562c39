import { randomFillSync } from 'node:crypto';
import { invalid } from '../errors.ts';
import { isReservedName } from './reserved.ts';

/** Shortest code a caller may choose through the API (CONTRACT §5). */
export const SHORTCODE_MIN = 5;
/**
 * Shortest code that can name a link at all. Imports keep other shorteners' codes (YOURLS
 * hands out `1`, `2a`, `ozh`; Shlink and Bitly 3-4 characters), so lookups accept any length.
 */
export const LOOKUP_MIN = 1;
export const SHORTCODE_MAX = 2000;
export const GENERATED_LENGTH = 6;
export const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * RFC 3986 unreserved characters: a short URL built from them never needs escaping. Written
 * as a source string, the one form both this module and the API's schemas can use.
 */
export const SHORTCODE_PATTERN = '^[A-Za-z0-9._~-]+$';
const SHORTCODE_SHAPE = new RegExp(SHORTCODE_PATTERN);

/**
 * True when the text could be the shortcode of some link: 1-2000 unreserved characters (an
 * imported link may be shorter than a chosen one). Used on the read paths to answer 404
 * without touching storage.
 */
export function couldBeShortcode(code: string): boolean {
  return code.length >= LOOKUP_MIN && code.length <= SHORTCODE_MAX && SHORTCODE_SHAPE.test(code);
}

/** Checks a caller-chosen shortcode and returns it, or throws an invalid-parameter error. */
export function validateCustomShortcode(code: string): string {
  // The shape admits ASCII only, so past it UTF-16 length equals the code-point count.
  if (!SHORTCODE_SHAPE.test(code)) {
    throw invalid('short may contain only the characters A-Z a-z 0-9 - . _ ~');
  }
  if (code.length < SHORTCODE_MIN || code.length > SHORTCODE_MAX) {
    throw invalid(`short must be ${SHORTCODE_MIN} to ${SHORTCODE_MAX} characters long`);
  }
  if (isReservedName(code)) {
    throw invalid(`short "${code}" is reserved by the service`);
  }
  return code;
}

/**
 * Checks a shortcode brought by an import (another shortener's code) and returns it, or throws
 * an invalid-parameter error. The API's rules but any length from 1: a short code is worth
 * keeping, since links already printed carry it. `.` and `..` are refused because clients
 * remove such path segments (RFC 3986 §5.2.4), so `/.` could never reach the link.
 */
export function validateImportedShortcode(code: string): string {
  if (!SHORTCODE_SHAPE.test(code)) {
    throw invalid('the shortcode may contain only the characters A-Z a-z 0-9 - . _ ~');
  }
  if (code.length > SHORTCODE_MAX) {
    throw invalid(`the shortcode must be at most ${SHORTCODE_MAX} characters long`);
  }
  if (isReservedName(code)) {
    throw invalid(`the shortcode "${code}" is a reserved path of this service (case-insensitively); rename it`);
  }
  if (code === '.' || code === '..') {
    throw invalid(`the shortcode "${code}" cannot be reached: clients remove "." and ".." path segments`);
  }
  return code;
}

// Random bytes are drawn in blocks and consumed a byte at a time; one block serves many codes.
const pool = Buffer.allocUnsafe(256);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/**
 * How many generated codes a create draws before it gives up (the service and the importer
 * alike). A code collides with probability (links held) / 62^6 per draw; eight straight
 * collisions mean the space is nearly full or something is wrong, not bad luck.
 */
export const GENERATION_ATTEMPTS = 8;

/**
 * A fresh 6-character code, each character uniform over the 62 alphanumerics. Bytes of 248
 * and above are rejected so that `byte % 62` carries no modulo bias (248 = 4 × 62).
 */
export function generateShortcode(): string {
  for (;;) {
    let code = '';
    while (code.length < GENERATED_LENGTH) {
      const byte = randomByte();
      if (byte < 248) code += ALPHABET[byte % 62];
    }
    if (!isReservedName(code)) return code;
  }
}
