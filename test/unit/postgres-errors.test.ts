import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStorageDamaged, isStorageFailure } from '../../src/store/errors.ts';
import { guarded, refusedConnection, translateError } from '../../src/store/postgres/errors.ts';

const failure = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });

describe('PostgreSQL errors', () => {
  test('data corruption (XX001, XX002) is storage damaged: 503 without Retry-After', () => {
    for (const code of ['XX001', 'XX002']) {
      const error = translateError(failure(code));
      assert.ok(isStorageDamaged(error), code);
      assert.equal((error as { retryAfter?: number }).retryAfter, undefined);
    }
  });

  test('connection failures stay storage unavailable, with Retry-After; other errors pass through', () => {
    for (const code of ['ECONNREFUSED', '08006', '53300', '57P01']) {
      const error = translateError(failure(code));
      assert.ok(isStorageFailure(error) && !isStorageDamaged(error), code);
      assert.equal((error as { retryAfter?: number }).retryAfter, 1);
    }
    const syntax = failure('42601');
    assert.equal(translateError(syntax), syntax);
  });

  test('a connection refused for a connection limit is tried again, and the call succeeds once one frees up', async () => {
    assert.ok(refusedConnection(failure('53300')));
    let attempts = 0;
    const result = await guarded(async () => {
      attempts++;
      if (attempts < 3) throw failure('53300');
      return 'served';
    });
    assert.equal(result, 'served');
    assert.equal(attempts, 3);
  });

  test('gives up on a refused connection after about a second, as storage unavailable', async () => {
    const started = performance.now();
    await assert.rejects(guarded(async () => {
      throw failure('53300');
    }), (error: unknown) => isStorageFailure(error));
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 800 && elapsed < 3000, `gave up after ${Math.round(elapsed)} ms`);
  });

  test('never retries other failures', async () => {
    let attempts = 0;
    await assert.rejects(guarded(async () => {
      attempts++;
      throw failure('23505');
    }));
    assert.equal(attempts, 1);
  });
});
