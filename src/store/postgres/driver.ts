/**
 * The PostgreSQL driver (`postgres` 3.4.9), loaded with our fix to its connection code (ADR 23).
 * Every module of ours that opens connections takes the driver from here, never from
 * `'postgres'` directly.
 *
 * The defect: 3.4.9 buffers small writes and flushes them from a `setImmediate`. A statement
 * issued on a connection whose socket is already gone (the ROLLBACK that `sql.begin` sends when
 * a restart of PostgreSQL cut its transaction off) schedules a flush that dereferences the
 * null socket and throws from the immediate, where nothing can catch it: the process dies.
 * And the teardown cancels a pending flush without forgetting it, so a reused connection
 * believes a flush is scheduled, never sends its next messages, and hangs until a timeout.
 * Two smaller ones go with them: a connection closed mid-statement keeps that statement, so
 * ending the pool waits for its answer forever; and behind PgBouncer a login refused after
 * "ready" (server_login_retry) rejects the driver's own fetch of the array types with no
 * handler, an unhandled rejection. Upstream has the reports (porsager/postgres #1066, #1154,
 * #1208) and open fix requests, but no release with a fix.
 *
 * The fix is applied as the driver is loaded: a module hook rewrites the text of
 * `src/connection.js` before Node compiles it. Loaded under a URL of its own (a query mark
 * that the hook passes on to the package's internal imports), the patched driver is a
 * private instance, whatever else in the process imported `'postgres'` before. Nothing is
 * written to node_modules, so `npm ci`, `--ignore-scripts`, a read-only image and the
 * published package all get the same code. Each replacement must match the 3.4.9 text
 * exactly; if one does not (another version installed), the store refuses to connect and
 * says why (`driverProblem`).
 */
import { registerHooks } from 'node:module';
import type postgresModule from 'postgres';

/** The version whose text the replacements below were written against. */
export const PATCHED_VERSION = '3.4.9';

/** Marks the URLs of the private, patched instance. */
const MARK = '?shortlink-driver-fix';
/** Shows in the patched text, so that a look at it (or a test) can tell. */
export const PATCH_TAG = '/* shortlink: ADR 23 */';

interface Replacement {
  readonly why: string;
  readonly from: string;
  readonly to: string;
  /** How many times `from` occurs in the 3.4.9 text. */
  readonly count: number;
}

const REPLACEMENTS: readonly Replacement[] = [
  {
    // execute() answers whether the connection can take more: false makes the pool park it as
    // "full" until a statement of its completes, which for a closed connection never happens;
    // true leaves it in the "closed" queue its close put it in, to be connected again.
    why: 'a statement on a connection whose socket is gone is rejected at once, not written into nothing, and the connection stays in the pool',
    from: `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))
`,
    to: `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))

    if (socket === null) { ${PATCH_TAG}
      queryError(q, Errors.connection('CONNECTION_CLOSED', options))
      return true
    }
`,
    count: 1,
  },
  {
    why: 'a flush that finds the socket gone drops its bytes instead of throwing from the immediate',
    from: `    const x = socket.write(chunk, fn)
`,
    to: `    const x = socket !== null && socket.write(chunk, fn) ${PATCH_TAG}
`,
    count: 1,
  },
  {
    why: 'the teardown (terminate and closed) forgets the cancelled flush and its bytes, so the next write schedules one again',
    from: `    clearImmediate(nextWriteTimer)
`,
    to: `    clearImmediate(nextWriteTimer)
    nextWriteTimer = chunk = null ${PATCH_TAG}
`,
    count: 2,
  },
  {
    why: 'a closed connection forgets the statement it rejected, and that statement\'s error and rows, so that ending the pool does not wait for its answer forever and the next connection\'s first statement does not get them',
    from: `    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
`,
    to: `    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
    query = results = errorResponse = null ${PATCH_TAG}
    result = new Result()
`,
    count: 1,
  },
  {
    why: 'a failed fetch of the array types (PgBouncer refusing the login after it said ready) is not an unhandled rejection: the statement waiting for the connection gets the error',
    from: `        return fetchArrayTypes()
`,
    to: `        return fetchArrayTypes().catch(() => undefined) ${PATCH_TAG}
`,
    count: 1,
  },
];

/** The text of the driver's connection.js with the fix applied; throws if it is not the 3.4.9 text. */
export function patchConnectionSource(source: string): string {
  if (source.includes(PATCH_TAG)) throw new Error('already patched');
  let patched = source;
  for (const { why, from, to, count } of REPLACEMENTS) {
    const found = patched.split(from).length - 1;
    if (found !== count) throw new Error(`cannot apply "${why}": its text occurs ${found} time(s), not ${count}`);
    patched = patched.split(from).join(to);
  }
  return patched;
}

/** Why the fix is not in the driver this module loaded, or undefined when it is. */
let problem: string | undefined = 'the driver\'s connection.js was never loaded through the fix';

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    // The package's own imports (./connection.js, ./types.js, …) stay in the private instance.
    if (context.parentURL?.endsWith(MARK) === true && resolved.url.startsWith('file:') && !resolved.url.endsWith(MARK)) {
      return { ...resolved, url: `${resolved.url}${MARK}` };
    }
    return resolved;
  },
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    if (!url.endsWith(`/postgres/src/connection.js${MARK}`)) return loaded;
    try {
      const text = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source);
      const source = patchConnectionSource(text);
      problem = undefined;
      return { ...loaded, source };
    } catch (error) {
      problem = `the fix does not apply to the installed driver (${(error as Error).message}; written for postgres ${PATCHED_VERSION})`;
      return loaded;
    }
  },
});

const entry = import.meta.resolve('postgres');
const postgres = ((await import(`${entry}${MARK}`)) as { default: typeof postgresModule }).default;

/** The driver, patched (see `driverProblem` before connecting). */
export default postgres;

/**
 * Why the loaded driver lacks the fix (another version installed, or the hook not run), or
 * undefined when it has it. The store refuses to connect with an unpatched driver: it would
 * let a PostgreSQL restart kill the process.
 */
export function driverProblem(): string | undefined {
  return problem;
}
