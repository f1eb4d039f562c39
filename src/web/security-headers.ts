/**
 * Every header set the service sends to a browser as a document or asset: the UI's page and
 * assets, the short-URL 404 page and the API docs (Swagger UI). No inline script or style is
 * ever allowed; everything comes from this origin, and nothing may frame the pages.
 */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The 404 page has no script, no form and nothing to fetch but its stylesheet and icon. */
export const NOT_FOUND_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Swagger UI needs no inline script or style (its page loads files only), data: images (its
 * logo) and connections to this origin (the document, and "Try it out").
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Sent with every browser-facing answer besides its Content-Security-Policy. */
export const BROWSER_HEADERS: Readonly<Record<string, string>> = {
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  // For browsers that predate frame-ancestors.
  'x-frame-options': 'DENY',
};
