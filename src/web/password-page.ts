/**
 * The password form of a protected link (CONTRACT §8.3): `GET /{code}` answers it (200), a
 * wrong `POST /{code}` answers it again with a message (401), and too many wrong guesses with
 * another (429, with Retry-After).
 *
 * It works without JavaScript: a plain form posts `password` (form-urlencoded) back to the
 * page's own URL (no `action`, so the Host the visitor used is kept). It holds nothing of the
 * link, its target least of all, and nothing from the request but the caller's message,
 * escaped. Unlike the other pages it does not load the UI's stylesheet, since a custom domain
 * may answer only short URLs: its small style is inline, allowed by its hash.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { BROWSER_HEADERS } from './security-headers.ts';

export interface PasswordPageOptions {
  /** 200 the first time, 401 after a wrong password, 429 when guessing is paused. */
  readonly status: 200 | 401 | 429;
  /** Shown above the form as an alert (plain text; escaped here). */
  readonly message?: string;
  /** Seconds until the visitor may try again (429): sent as Retry-After. */
  readonly retryAfter?: number;
}

const STYLE = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; color: CanvasText; }
main { width: min(24rem, calc(100% - 2rem)); padding: 1.5rem 0; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
form { display: grid; gap: .5rem; margin-top: 1rem; }
label { font-weight: 600; }
input, button { font: inherit; padding: .55rem .7rem; border-radius: .4rem; }
input { border: 1px solid GrayText; background: Field; color: FieldText; }
button { border: 1px solid transparent; background: #1d4ed8; color: #fff; cursor: pointer; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.alert { margin: 1rem 0 0; padding: .6rem .8rem; border-radius: .4rem; border: 1px solid #b91c1c; background: #fef2f2; color: #7f1d1d; }
`;

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * Nothing may load or run but the inline style. `form-action` must allow every http(s) place
 * and not only 'self': the form posts here, but a right password answers with a redirect to
 * the link's target, and Chrome checks a form's redirects against form-action too (it would
 * refuse the redirect). The page cannot name the target (it must not reveal it), and it holds
 * no script nor anything from the request that could plant another form.
 */
export const PASSWORD_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src ${STYLE_HASH}`,
  "form-action 'self' https: http:",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

/** The page itself: a heading, the message if any (announced as an alert), and the form. */
export function passwordPage(message?: string): string {
  const alert = message === undefined || message === ''
    ? ''
    : `<p class="alert" role="alert" id="password-message">${escapeHtml(message)}</p>\n`;
  const described = alert === '' ? '' : ' aria-describedby="password-message" aria-invalid="true"';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>Password required · Shortlink</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>This link is protected</h1>
<p>Enter the password you were given to continue.</p>
${alert}<form method="post">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autofocus autocomplete="current-password" autocapitalize="off" spellcheck="false"${described}>
<button type="submit">Continue</button>
</form>
</main>
</body>
</html>
`;
}

/** Answers the password form with its own headers: never cached, never framed, no referrer. */
export function sendPasswordPage(reply: FastifyReply, options: PasswordPageOptions): FastifyReply {
  reply
    .code(options.status)
    .headers(BROWSER_HEADERS)
    .header('content-security-policy', PASSWORD_CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8');
  // The contract's one WWW-Authenticate for every 401 (§3, §8.3).
  if (options.status === 401) reply.header('www-authenticate', 'Bearer realm="shortlink"');
  if (options.status === 429 && options.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(options.retryAfter))));
  return reply.send(passwordPage(options.message));
}
