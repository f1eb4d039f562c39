/**
 * The container image, built and run for real with Podman: enabled by SHORTLINK_CONTAINER_TEST=1
 * (.ci/run sets it once Podman is installed), skipped otherwise, since a build takes minutes
 * and needs Podman, debootstrap and network access to Debian's mirror and the npm registry.
 *
 * deploy/podman/build.sh builds the image (a base from Debian packages and Node 24 unless
 * BASE_IMAGE says otherwise); then the image must serve as a non-root user under tini, report
 * healthy, stop within 10 s of SIGTERM with status 0, and keep its SQLite data in the volume
 * across a restart.
 *
 * The build and the container use the host's network (`--network host`, the server on a free
 * loopback port through PORT and HOST): a bridge network would add interfaces to the machine
 * while the browser tests run beside this one, and Chromium aborts its requests in flight when
 * interfaces change (net::ERR_NETWORK_CHANGED), failing those tests.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, succeeded } from '../helpers/packing.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { REPO_ROOT } from '../helpers/working-tree.ts';

const ENABLED = process.env.SHORTLINK_CONTAINER_TEST === '1';
const IMAGE = process.env.SHORTLINK_CONTAINER_IMAGE ?? 'localhost/shortlink:test';
const ENV = {
  ...process.env,
  CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(REPO_ROOT, 'deploy', 'podman', 'containers.conf'),
  BUILD_NETWORK: 'host',
};
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const NAME = `shortlink-test-${suffix}`;
const VOLUME = `shortlink-test-data-${suffix}`;

const podman = (...args: string[]) => run('podman', args, { env: ENV, timeoutMs: 60_000 });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('the container image', { skip: ENABLED ? false : 'set SHORTLINK_CONTAINER_TEST=1 (needs Podman) to build and run the image', timeout: 900_000 }, () => {
  let port: number;
  let base: string;

  before(async () => {
    succeeded(await run(join(REPO_ROOT, 'deploy', 'podman', 'build.sh'), [IMAGE], { env: ENV, timeoutMs: 840_000 }), 'deploy/podman/build.sh');
    succeeded(await podman('volume', 'create', VOLUME), 'podman volume create');
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await podman('rm', '--force', '--time', '0', NAME);
    await podman('volume', 'rm', '--force', VOLUME);
  });

  const start = async () => {
    succeeded(
      await podman(
        'run', '--detach', '--name', NAME, '--network', 'host', '--env', 'HOST=127.0.0.1', '--env', `PORT=${port}`,
        '--volume', `${VOLUME}:/data`, '--env', `BASE_URL=${base}`, IMAGE,
      ),
      'podman run',
    );
    await waitFor(async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok, 'the container to answer /healthz', { timeoutMs: 30_000, intervalMs: 200 });
  };
  const stop = async () => {
    const started = performance.now();
    succeeded(await podman('stop', '--time', '10', NAME), 'podman stop');
    const elapsedMs = performance.now() - started;
    const code = succeeded(await podman('inspect', '--format', '{{.State.ExitCode}}', NAME), 'podman inspect').stdout.trim();
    succeeded(await podman('rm', NAME), 'podman rm');
    return { elapsedMs, code };
  };

  test('serves as a non-root user under tini, reports healthy, stops on SIGTERM, keeps its data', async () => {
    await start();
    const account = (await (await fetch(`${base}/v1/new_account`, { method: 'POST' })).json()) as { AccessCode: string; Uid: number };
    const created = await fetch(`${base}/v1/link?url=${encodeURIComponent('https://example.com/kept')}&short=kept-link`, { headers: { authorization: account.AccessCode } });
    assert.equal(created.status, 200);
    assert.equal(await created.text(), `${base}/kept-link`);

    const processes = succeeded(await podman('top', NAME, 'user', 'pid', 'args'), 'podman top').stdout;
    assert.match(processes, /node\s+1\s+tini -- shortlink serve/);
    assert.doesNotMatch(processes, /^root\b/m);
    // The image's HEALTHCHECK, run on demand (its timer needs systemd, which this machine lacks).
    succeeded(await podman('healthcheck', 'run', NAME), 'podman healthcheck run');

    const stopped = await stop();
    assert.equal(stopped.code, '0');
    assert.ok(stopped.elapsedMs < 10_000, `stopped after ${Math.round(stopped.elapsedMs)} ms`);

    await start();
    const resolved = await fetch(`${base}/v1/get/kept-link`);
    assert.equal(resolved.status, 200);
    assert.equal(((await resolved.json()) as { PointsTo: string }).PointsTo, 'https://example.com/kept');
    const me = await fetch(`${base}/v1/get_account`, { headers: { authorization: account.AccessCode } });
    assert.equal(((await me.json()) as { Uid: number }).Uid, account.Uid);
    assert.equal((await stop()).code, '0');
  });
});
