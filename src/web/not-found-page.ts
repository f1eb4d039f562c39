import type { FastifyReply } from 'fastify';
import { webAssets } from './assets.ts';
import { BROWSER_HEADERS, NOT_FOUND_CONTENT_SECURITY_POLICY } from './security-headers.ts';

let page: string | undefined;

/**
 * The one HTML answer: a GET in the short-URL space (`/{anything}`) that is no live link.
 * People land there from a browser, so they get a page rather than a bare error line. It
 * is styled by the UI's stylesheet (no inline style, so its CSP stays strict) and holds
 * nothing from the request.
 */
function notFoundPage(): string {
  page ??= `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Link not found · Shortlink</title>
<link rel="stylesheet" href="${webAssets().href('app.css')}">
<link rel="icon" href="${webAssets().href('favicon.svg')}" type="image/svg+xml">
</head>
<body class="not-found">
<main>
<h1>This short link does not exist</h1>
<p>It may have been mistyped, or deleted by its owner.</p>
<p><a href="/">Go to Shortlink</a></p>
</main>
</body>
</html>
`;
  return page;
}

/** Answers the short-URL space's 404 as the small HTML page (people arrive here from browsers). */
export function sendNotFoundPage(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .headers(BROWSER_HEADERS)
    .header('content-security-policy', NOT_FOUND_CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(notFoundPage());
}
