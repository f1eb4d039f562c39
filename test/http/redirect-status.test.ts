import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RedirectStatus } from '../../src/config.ts';
import { newAccount } from '../helpers/app.ts';
import { accessesOf, appFor, createLinkOk } from './support.ts';

const TARGET = 'https://example.com/päth?q=1';

describe('REDIRECT_STATUS', () => {
  test('is 302 by default', async (t) => {
    const { app, config } = await appFor(t);
    assert.equal(config.redirectStatus, 302);
    const { code } = await newAccount(app);
    const short = await createLinkOk(app, code, { url: TARGET });
    assert.equal((await app.inject({ method: 'GET', url: `/${short}` })).statusCode, 302);
  });

  for (const status of [301, 302, 307, 308] as const satisfies readonly RedirectStatus[]) {
    test(`${status}: the short URL answers ${status} with the target, counting GET but not HEAD`, async (t) => {
      const { app } = await appFor(t, { redirectStatus: status });
      const { code } = await newAccount(app);
      const short = await createLinkOk(app, code, { url: TARGET });

      const response = await app.inject({ method: 'GET', url: `/${short}` });
      assert.equal(response.statusCode, status);
      assert.equal(response.headers.location, 'https://example.com/p%C3%A4th?q=1');
      assert.equal(response.headers['cache-control'], 'private, no-cache');
      assert.equal(response.body, '');

      const head = await app.inject({ method: 'HEAD', url: `/${short}` });
      assert.equal(head.statusCode, status);
      assert.equal(head.headers.location, 'https://example.com/p%C3%A4th?q=1');
      assert.equal(await accessesOf(app, code, short), 1);

      // The API's resolution is not a redirect and keeps answering 200.
      assert.equal((await app.inject({ method: 'GET', url: `/v1/get/${short}` })).statusCode, 200);
      // Unknown codes still get the HTML 404 page.
      assert.equal((await app.inject({ method: 'GET', url: '/no-such-link' })).statusCode, 404);
    });
  }
});
