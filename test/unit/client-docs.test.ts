/**
 * The client's documentation against the client: its README ships in the tarball, so it may
 * not link outside the package (a `../../docs/…` link is broken for everyone who installs
 * it), and the method tables (the README's, and docs/api.md's "Client library") name every
 * public method of ShortlinkClient, so a new method cannot go undocumented.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const CLIENT = join(REPO_ROOT, 'packages', 'client');
const README = readFileSync(join(CLIENT, 'README.md'), 'utf8');

/** The public methods of ShortlinkClient, read from its source. */
function clientMethods(): string[] {
  const source = readFileSync(join(CLIENT, 'src', 'index.ts'), 'utf8');
  const start = source.indexOf('export class ShortlinkClient {');
  const body = source.slice(start, source.indexOf('\n}\n', start));
  return [...body.matchAll(/^ {2}(?:async \*?)?([a-z]\w*)\(/gm)].map((match) => match[1]!).filter((name) => name !== 'constructor');
}

test('the client README links nothing outside the package', () => {
  const links = [...README.matchAll(/\]\(([^)]+)\)/g)].map((match) => match[1]!);
  const relative = links.filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link) && !link.startsWith('#'));
  assert.deepEqual(relative, [], 'relative links break once the README is in node_modules');
});

test('the README and docs/api.md list every method of ShortlinkClient', () => {
  const methods = clientMethods();
  assert.ok(methods.includes('shorten') && methods.includes('listLinksCsv') && methods.length > 15, methods.join(', '));
  const api = readFileSync(join(REPO_ROOT, 'docs', 'api.md'), 'utf8');
  const table = api.slice(api.indexOf('| Method | Endpoint | Result |'), api.indexOf('`ShortlinkAdminClient`'));
  assert.doesNotMatch(table, /\|\n\n\|/, 'one table, not two split by a blank line');
  for (const method of methods.filter((name) => name !== 'withAccessCode')) {
    assert.match(table, new RegExp(`\`${method}\\(`), `docs/api.md's client table lacks ${method}`);
    assert.match(README, new RegExp(`\`${method}\\(`), `the client README lacks ${method}`);
  }
});
