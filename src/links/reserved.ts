/**
 * Root paths the service keeps for itself. A custom shortcode may not equal any of them
 * (compared case-insensitively), and a generated one that does is drawn again. Listed in
 * docs/api.md; keep the two in step.
 */
export const RESERVED_NAMES: readonly string[] = [
  'v1', 'v2', 'api', 'assets', 'static', 'ui', 'app', 'web', 'admin', 'login', 'logout',
  'docs', 'documentation', 'openapi.json', 'openapi.yaml', 'swagger', 'swagger.json',
  'health', 'healthz', 'readyz', 'livez', 'status', 'metrics',
  'favicon.ico', 'robots.txt', 'sitemap.xml', 'humans.txt', 'security.txt', '.well-known',
  'manifest.json', 'manifest.webmanifest', 'apple-touch-icon.png', 'index.html',
];

const reserved = new Set(RESERVED_NAMES);

export function isReservedName(code: string): boolean {
  return code.length <= 24 && reserved.has(code.toLowerCase());
}
