import type { FastifyReply } from 'fastify';
import type { GoneRefusal as LinkRefusal } from '../links/link-service.ts';
import { webAssets } from './assets.ts';
import { BROWSER_HEADERS, NOT_FOUND_CONTENT_SECURITY_POLICY } from './security-headers.ts';

const EXPLANATIONS: Readonly<Record<LinkRefusal, { title: string; text: string }>> = {
  expired: { title: 'This short link has expired', text: 'Its owner set it to stop working at a chosen time, and that time has passed.' },
  visit_limit: { title: 'This short link has reached its visit limit', text: 'Its owner allowed a set number of visits, and all of them have been used.' },
  disabled: { title: 'This short link has been disabled', text: 'The account it belongs to has been disabled.' },
};

const pages = new Map<LinkRefusal, string>();

/**
 * The 410 page: a short URL that exists but no longer leads anywhere. Like the not-found
 * page (not-found-page.ts), styled by the UI's stylesheet, under the same strict CSP, and
 * holding nothing from the request.
 */
function gonePage(refusal: LinkRefusal): string {
  let page = pages.get(refusal);
  if (page === undefined) {
    const { title, text } = EXPLANATIONS[refusal];
    page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · Shortlink</title>
<link rel="stylesheet" href="${webAssets().href('app.css')}">
<link rel="icon" href="${webAssets().href('favicon.svg')}" type="image/svg+xml">
</head>
<body class="not-found">
<main>
<h1>${title}</h1>
<p>${text}</p>
<p><a href="/">Go to Shortlink</a></p>
</main>
</body>
</html>
`;
    pages.set(refusal, page);
  }
  return page;
}

/** Answers a redirect to a link that no longer resolves with the small HTML 410 page. */
export function sendGonePage(reply: FastifyReply, refusal: LinkRefusal): FastifyReply {
  return reply
    .code(410)
    .headers(BROWSER_HEADERS)
    .header('content-security-policy', NOT_FOUND_CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(gonePage(refusal));
}
