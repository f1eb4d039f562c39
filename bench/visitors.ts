/**
 * Realistic visitors for the statistics workloads: User-Agents of browsers, apps and crawlers
 * in roughly the mix a public short link sees, referrers, and client addresses in several
 * countries sent as X-Forwarded-For (the server trusts 127.0.0.1 as its proxy: TRUST_PROXY).
 */
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/21E236 Instagram 327.0.0.33.119',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'curl/8.5.0',
];
const REFERERS = ['', 'https://www.google.com/', 'https://t.co/abc', 'https://news.ycombinator.com/item?id=1', 'android-app://com.slack/', 'https://mail.example.com/inbox'];
const ADDRESSES = ['8.8.8.8', '81.2.69.160', '1.1.1.1', '193.0.6.139', '2a00:1450:4001::1', '203.0.113.7', '200.160.2.3', '41.203.64.1', '133.242.0.1'];

/** `count` header sets cycling through agents, referrers and addresses (coprime lengths: many combinations). */
export function visitorHeaders(count = 500): Record<string, string>[] {
  return Array.from({ length: count }, (_, i) => {
    const headers: Record<string, string> = {
      'user-agent': AGENTS[i % AGENTS.length]!,
      'x-forwarded-for': ADDRESSES[(i * 7) % ADDRESSES.length]!,
    };
    const referer = REFERERS[(i * 5) % REFERERS.length]!;
    if (referer !== '') headers.referer = referer;
    return headers;
  });
}
