/**
 * Browser-test support: the app listening on loopback with its public address set to where
 * it listens (so short URLs open in the browser), Debian's Chromium driven by
 * playwright-core, and a guard that records and refuses every request leaving the origin.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import type { Config } from '../../src/config.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { createTestApp, testConfig } from '../helpers/app.ts';
import { createPostgresDatabase, serviceGate } from '../helpers/services.ts';
import { READY_BOUND_MS, WAIT_BOUND_MS } from '../helpers/wait-for.ts';

export const chromiumGate = serviceGate('CHROMIUM_PATH', 'Browser');

/** Where screenshots go: ignored by git, kept after the run for a reviewer. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));

const LAUNCH_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Nothing may resolve but loopback: a request that slipped past the guard could not leave.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** A free loopback port, picked by the kernel. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface UiServer {
  readonly app: FastifyInstance;
  /** `http://127.0.0.1:<port>`: where it listens and its BASE_URL. */
  readonly origin: string;
}

/**
 * The app on its own database, listening on loopback, with BASE_URL set to its address
 * (unless `config.baseUrl` names another). SQLite by default; `postgresUrl` puts it on a
 * fresh PostgreSQL database instead.
 * Everything is closed and removed when the test ends.
 */
export async function startUiServer(
  t: TestContext,
  options: { postgresUrl?: string; config?: Partial<Config> } = {},
): Promise<UiServer> {
  // The port must be known before the app is built (short URLs carry it). Another process
  // could take it between the probe and listen: then try another one.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const { app, close } = await buildOn({ baseUrl: origin, ...options.config }, options.postgresUrl);
    try {
      await app.listen({ port, host: '127.0.0.1' });
    } catch (error) {
      await close();
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 5) continue;
      throw error;
    }
    t.after(close);
    return { app, origin };
  }
}

async function buildOn(overrides: Partial<Config>, postgresUrl: string | undefined) {
  if (postgresUrl === undefined) {
    const testApp = await createTestApp(overrides);
    return { app: testApp.app, close: () => testApp.close() };
  }
  const database = await createPostgresDatabase(postgresUrl);
  const store = await openPostgresStore({ url: database.url, max: 4 });
  const app = await buildApp({ config: testConfig(overrides), store });
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      await store.close();
      await database.drop();
    },
  };
}

/**
 * A page on another origin that short links can point at: the browser lands there after
 * following one. Local, so a followed short link never reaches the internet.
 */
export async function startDestination(t: TestContext): Promise<{ origin: string; visits: string[] }> {
  const visits: string[] = [];
  const origin = await serveOnLoopback(t, (request, response) => {
    // The browser asks any page's origin for its icon by itself: not a visit.
    if (request.url === '/favicon.ico') {
      response.writeHead(404).end();
      return;
    }
    visits.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>Destination</title><h1>You arrived</h1>');
  });
  return { origin, visits };
}

/**
 * A plain node:http server on a loopback port for the test's length (a page of another
 * origin, a webhook receiver); answers its origin, `http://127.0.0.1:<port>`.
 */
export async function serveOnLoopback(t: TestContext, handler: RequestListener): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.close(() => resolve());
    // A socket Chromium opened ahead and never used is not idle to Node: without this, close()
    // waits for its headers timeout (60 s).
    server.closeAllConnections();
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export interface BrowserSession {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Requests to any origin but the app's (and the destination's, when given): must stay empty. */
  readonly foreignRequests: string[];
  /** Uncaught errors in the page. */
  readonly pageErrors: string[];
  /** Requests that got no answer (refused, cut, blocked), as `METHOD url: reason`. */
  readonly failedRequests: string[];
  /** Native dialogs opened (alert, confirm, prompt): the UI uses none, injected script would. */
  readonly dialogs: string[];
  /** Content-Security-Policy violations reported by the page. */
  cspViolations(): Promise<string[]>;
}

/** Marks the page's CSP violations, so a test can assert there were none. */
const INIT_SCRIPT = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__cspViolations.push(event.violatedDirective + ' ' + event.blockedURI);
  });
`;

/**
 * Chromium with a fresh profile, one page open. Only the app's origin (and `allowedOrigin`,
 * for following short links) may be requested; anything else is recorded and aborted.
 */
export async function openBrowser(
  t: TestContext,
  appOrigin: string,
  options: {
    allowedOrigin?: string;
    viewport?: { width: number; height: number };
    colorScheme?: 'light' | 'dark';
    /** The browser's time zone; UTC unless given. */
    timezoneId?: string;
  } = {},
): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), 'shortlink-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumGate.value!,
    headless: true,
    args: LAUNCH_ARGS,
    viewport: options.viewport ?? { width: 1280, height: 900 },
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
    permissions: ['clipboard-read', 'clipboard-write'],
    locale: 'en-GB',
    timezoneId: options.timezoneId ?? 'UTC',
    // Bounds, not durations (wait-for.ts): Chromium starting on a loaded machine, and each
    // action waiting for its element.
    timeout: READY_BOUND_MS,
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  context.setDefaultTimeout(WAIT_BOUND_MS);

  const allowed = new Set([appOrigin, ...(options.allowedOrigin === undefined ? [] : [options.allowedOrigin])]);
  const isAllowed = (url: string) => {
    const parsed = new URL(url);
    return parsed.protocol === 'data:' || parsed.protocol === 'blob:' || allowed.has(parsed.origin);
  };
  const foreignRequests: string[] = [];
  const failedRequests: string[] = [];
  // Recorded, not intercepted: LAUNCH_ARGS already keep every name but loopback from
  // resolving, so nothing leaves the machine. Intercepting every request (context.route) put a
  // round trip through this process in front of each of the UI's ~40 module loads, and once,
  // on a loaded CI machine, the page never started within a minute.
  context.on('request', (request) => {
    if (!isAllowed(request.url())) foreignRequests.push(request.url());
  });
  context.on('requestfailed', (request) => {
    failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'failed'}`);
  });
  await context.addInitScript(INIT_SCRIPT);

  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  const dialogs: string[] = [];
  const watch = (p: Page) => {
    p.on('pageerror', (error) => pageErrors.push(error.message));
    p.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
  };
  watch(page);
  context.on('page', watch);

  return {
    context,
    page,
    foreignRequests,
    pageErrors,
    failedRequests,
    dialogs,
    cspViolations: () => page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations),
  };
}

/** The page's text of one element, once it matches `expected` (Playwright polls until then). */
export async function waitForText(page: Page, selector: string, expected: string | RegExp): Promise<void> {
  await page.locator(selector).filter({ hasText: expected }).first().waitFor();
}

/**
 * Saves a screenshot under artifacts/screenshots/ and answers its path: the full page, or
 * the viewport alone (for a modal dialog, whose backdrop covers only the viewport).
 */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  // Keep the pointer from hovering (and so revealing) anything.
  await page.mouse.move(0, 0);
  await page.screenshot({ path, fullPage, animations: 'disabled' });
  return path;
}

/** Opens the UI and waits for the script to have decided what to show. */
export async function openUi(session: BrowserSession, origin: string): Promise<void> {
  await session.page.goto(`${origin}/`);
  try {
    await session.page.locator('#signed-in:not([hidden]), #signed-out:not([hidden])').waitFor();
  } catch (error) {
    // Say why the script never ran: a module that failed to load, or an error in the page.
    const seen = { failedRequests: session.failedRequests, pageErrors: session.pageErrors };
    throw new Error(`the UI did not start: ${JSON.stringify(seen)}`, { cause: error });
  }
}

/** Creates an account with the page's button; answers the access code it shows once. */
export async function createAccountInUi(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.locator('#new-code-value').filter({ hasText: /\S/ }).waitFor();
  return (await page.locator('#new-code-value').textContent()) ?? '';
}

/** The id of the element that has focus ('' when it has none). */
export async function activeId(page: Page): Promise<string> {
  return page.evaluate(() => document.activeElement?.id ?? '');
}

/** Nothing left the origin, nothing threw, and the CSP never had to block anything. */
export async function assertCleanSession(session: BrowserSession): Promise<void> {
  assert.deepEqual(session.foreignRequests, [], 'requests that left the origin');
  assert.deepEqual(session.pageErrors, [], 'uncaught errors in the page');
  assert.deepEqual(session.dialogs, [], 'native dialogs');
  assert.deepEqual(await session.cspViolations(), [], 'Content-Security-Policy violations');
}
