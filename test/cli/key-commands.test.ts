/**
 * `shortlink shorten --from-file` (bulk create, CONTRACT §8.4) and `shortlink keys …` (API
 * keys, §8.5) against a running server.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';
import { runCli, tempFolder, type RunOptions } from './support.ts';

describe('bulk and key commands against a running server', () => {
  let server: ServerProcess;
  const folder = tempFolder();

  before(async () => {
    server = await startServer({ env: { DEFAULT_MAX_LINKS: '150' } });
  });
  after(async () => {
    await cleanup();
    folder.remove();
  });

  function cli(args: string[], options: RunOptions = {}) {
    return runCli(args, { ...options, env: { SHORTLINK_SERVER: server.url, ...options.env } });
  }

  async function newCode(): Promise<string> {
    const result = await cli(['account', 'create']);
    assert.equal(result.code, 0, result.stderr);
    return (JSON.parse(result.stdout) as { AccessCode: string }).AccessCode;
  }

  test('shorten --from-file creates one link per line, 100 per request, and prints each result in order', async () => {
    const code = await newCode();
    const path = folder.file('links.txt');
    const lines = ['# a comment', '', 'https://example.com/first file-first', 'not-a-url', 'https://example.com/dup file-first'];
    for (let i = 0; i < 120; i++) lines.push(`https://example.com/${i}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const result = await cli(['shorten', '--from-file', path], { env: { SHORTLINK_ACCESS_CODE: code } });
    assert.equal(result.code, 1, result.stderr);
    const out = result.stdout.trimEnd().split('\n');
    assert.equal(out.length, 123);
    assert.equal(out[0], `${E2E_BASE_URL}/file-first`);
    assert.match(out[1]!, /^line 4: Unable to create link: /);
    assert.equal(out[2], 'line 5: Unable to create link: the shortcode "file-first" is already taken');
    for (const line of out.slice(3)) assert.match(line, new RegExp(`^${E2E_BASE_URL}/[A-Za-z0-9]{6}$`));
    assert.match(result.stderr, /2 of 123 links were not created/);
    const list = await cli(['links', '--json'], { env: { SHORTLINK_ACCESS_CODE: code } });
    assert.equal((JSON.parse(list.stdout) as unknown[]).length, 121);
  });

  test('shorten --from-file exits 0 when every link was created, and refuses a URL beside it', async () => {
    const code = await newCode();
    const path = folder.file('two.txt');
    writeFileSync(path, 'https://example.com/a\nhttps://example.com/b\n');
    const ok = await cli(['shorten', '--from-file', path], { env: { SHORTLINK_ACCESS_CODE: code } });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trimEnd().split('\n').length, 2);
    const both = await cli(['shorten', 'https://example.com/', '--from-file', path], { env: { SHORTLINK_ACCESS_CODE: code } });
    assert.equal(both.code, 2);
    const none = await cli(['shorten'], { env: { SHORTLINK_ACCESS_CODE: code } });
    assert.equal(none.code, 2);
  });

  test('keys create prints the key once; keys list shows it without the key; keys delete removes it', async () => {
    const code = await newCode();
    const env = { SHORTLINK_ACCESS_CODE: code };
    const created = await cli(['keys', 'create', 'cli key', 'links:read,links:write'], { env });
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout) as { Id: string; Key: string; Scopes: string[] };
    assert.match(key.Key, /^slk_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(key.Scopes, ['links:read', 'links:write']);
    assert.match(created.stderr, /cannot be shown again/);

    // The key works where the access code goes, within its scopes.
    const shortened = await cli(['shorten', 'https://example.com/keyed', '--short', 'cli-keyed'], { env: { SHORTLINK_ACCESS_CODE: key.Key } });
    assert.equal(shortened.code, 0, shortened.stderr);
    const refused = await cli(['keys', 'list'], { env: { SHORTLINK_ACCESS_CODE: key.Key } });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Unable to manage keys: the key does not allow this/);

    const list = await cli(['keys', 'list'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${key.Id}  links:read,links:write  \\S+  cli key\n$`));
    assert.doesNotMatch(list.stdout, /slk_/);
    const json = await cli(['keys', 'list', '--json'], { env });
    assert.deepEqual((JSON.parse(json.stdout) as { Id: string }[]).map((k) => k.Id), [key.Id]);

    const deleted = await cli(['keys', 'delete', key.Id], { env });
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, `Deleted ${key.Id}\n`);
    assert.equal((await cli(['keys', 'list'], { env })).stdout, 'No API keys.\n');
    const unknown = await cli(['keys', 'delete', key.Id], { env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /HTTP 404/);
    assert.equal((await cli(['keys', 'create', 'x', ''], { env })).code, 2);
  });
});
