/**
 * The Dockerfile and compose.yaml, read as text: what the image must have wherever it is built
 * (the image itself is built and run by test/e2e/container.test.ts, with Podman), and no
 * password in the repository.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

test('the Dockerfile builds in two stages on a selectable base, and runs non-root under tini with a health check and a data volume', () => {
  assert.match(dockerfile, /^ARG BASE_IMAGE=node:24-bookworm-slim$/m);
  assert.equal(dockerfile.match(/^FROM \$\{BASE_IMAGE\}/gm)?.length, 2);
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^VOLUME \/data$/m);
  assert.match(dockerfile, /DATABASE_URL=\/data\/shortlinks\.db/);
  assert.match(dockerfile, /^ENTRYPOINT \["tini", "--"\]$/m);
  assert.match(dockerfile, /^CMD \["shortlink", "serve"\]$/m);
  assert.match(dockerfile, /^HEALTHCHECK .*\n.*\/healthz/m);
  assert.match(dockerfile, /^COPY bin bin$/m);
});

test('compose.yaml holds no password: PostgreSQL\'s comes from the environment, required', () => {
  const text = readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8');
  assert.doesNotMatch(text, /change-me/);
  const compose = parse(text, { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; build?: string }>;
  };
  assert.equal(compose.services.postgres!.environment!.POSTGRES_PASSWORD, '${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}');
  for (const name of ['app-1', 'app-2']) {
    assert.equal(compose.services[name]!.build, '.');
    assert.match(compose.services[name]!.environment!.DATABASE_URL!, /^postgres:\/\/shortlink:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/shortlink$/);
  }
});
