import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../errors.ts';
import type { NamedCount, Statistics, StatsService } from '../../stats/stats-service.ts';
import { Operation } from '../operations.ts';
import { parameterNames, readParameters } from '../parameters.ts';
import { accountOf, type Authenticate } from '../route-helpers.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { ACCESS_CODE_SECURITY, errorResponses, StatsQuery, StatsSchema, type Statistics as StatisticsBody } from '../schemas.ts';
import type { DomainRegistry } from '../../domains/domain-registry.ts';
import { codeOf, linkKey } from '../../links/link-key.ts';

export interface StatsRoutesDeps {
  readonly stats: StatsService;
  /** The domain a `domain` parameter names. */
  readonly domains: DomainRegistry;
  readonly authenticate: Authenticate;
  readonly rateLimits: RateLimitChecks;
}

const CSV = 'text/csv; charset=utf-8';
const STATS_PARAMETERS = parameterNames(StatsQuery);

export function registerStatsRoutes(app: FastifyInstance, { stats, authenticate, domains }: StatsRoutesDeps): void {
  const options = (suffix: string) => ({
    config: { operation: Operation.GetStatistics },
    onRequest: authenticate,
    schema: {
      operationId: `getStatistics${suffix}`,
      summary: 'Visit statistics of one link or of the whole account',
      description:
        'Owner only. `short` for one link, none for every link of the account; `from` and `to` RFC 3339 (default the last ' +
        '30 days); `interval` hour, day or month (UTC). `Accept: text/csv` or `format=csv` answers the series as CSV ' +
        '(`time,visits,bots`). A resolution is in the statistics as soon as it is answered.',
      tags: ['statistics'],
      security: ACCESS_CODE_SECURITY,
      querystring: StatsQuery,
      response: {
        200: {
          description: 'The statistics (JSON), or the series as CSV',
          content: {
            'application/json': { schema: StatsSchema },
            'text/csv': { schema: { type: 'string', examples: ['time,visits,bots\n2026-11-01T00:00:00.000Z,12,3\n'] } },
          },
        },
        ...errorResponses(Operation.GetStatistics, [400, 401, 403, 404, 429, 503]),
      },
    },
  });
  const get = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(request);
    const { short, from, to, interval, format, domain } = readParameters(STATS_PARAMETERS, request.query, undefined);
    if (format !== undefined && format !== 'csv' && format !== 'json') throw invalid('the parameter "format" must be csv or json');
    const csv = format === 'csv' || (format === undefined && wantsCsv(request.headers.accept));
    // The link's key: its domain's host and its code (a domain must be registered, also without `short`).
    const named = domains.named(domain);
    const key = short === undefined ? undefined : linkKey(named.isDefault ? null : named.host, short);
    const statistics = await stats.get(account, { short: key, from, to, interval });
    if (csv) {
      reply.type(CSV);
      return seriesCsv(statistics);
    }
    return statsBody(statistics);
  };
  app.get('/v1/stats', options(''), get);
  // HEAD answers GET's headers without the body (reading changes nothing).
  app.head('/v1/stats', options('Head'), get);
}

/** True when the client prefers CSV: `text/csv` accepted, and JSON not preferred to it. */
export function wantsCsv(accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes('text/csv')) return false;
  const quality = (type: string) => {
    for (const part of accept.toLowerCase().split(',')) {
      const [media, ...params] = part.trim().split(';');
      if (media?.trim() !== type) continue;
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return q === undefined ? 1 : Number(q.slice(2)) || 0;
    }
    return -1;
  };
  return quality('text/csv') > 0 && quality('text/csv') >= quality('application/json');
}

function seriesCsv(statistics: Statistics): string {
  let text = 'time,visits,bots\n';
  for (const point of statistics.series) text += `${point.time.toISOString()},${point.visits},${point.bots}\n`;
  return text;
}

const named = (list: readonly NamedCount[]) => list.map(({ name, visits }) => ({ Name: name, Visits: visits }));

/** The contract's key order. */
export function statsBody(s: Statistics): StatisticsBody {
  return {
    ShortCode: s.shortCode === null ? null : codeOf(s.shortCode),
    From: s.from.toISOString(),
    To: s.to.toISOString(),
    Interval: s.interval,
    Visits: s.visits,
    Humans: s.humans,
    Bots: s.bots,
    Series: s.series.map((point) => ({ Time: point.time.toISOString(), Visits: point.visits, Bots: point.bots })),
    Referrers: named(s.referrers),
    Countries: named(s.countries),
    Browsers: named(s.browsers),
    OperatingSystems: named(s.operatingSystems),
    Devices: named(s.devices),
  };
}
