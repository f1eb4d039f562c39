import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account, AccountService } from '../../accounts/account-service.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import { Operation } from '../operations.ts';
import { accountBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import { ACCESS_CODE_SECURITY, AccountSchema, AuthQuery, errorResponses, PUBLIC_SECURITY } from '../schemas.ts';

/** The Account JSON. Carries the access code: never cache it. */
function sendAccount(reply: FastifyReply, account: Account) {
  reply.header('cache-control', 'no-store');
  return accountBody(account);
}

/** An Account answer; it carries the access code, hence `no-store`. */
const ACCOUNT_RESPONSE = {
  description: 'The account, its access code included',
  headers: { 'Cache-Control': { type: 'string', description: 'no-store' } },
  content: { 'application/json': { schema: AccountSchema } },
};

export interface AccountRoutesDeps {
  readonly accounts: AccountService;
  /** Reads the account from the store, never from the cache: the answer is the account itself. */
  readonly authenticate: Authenticate;
  readonly rateLimits: RateLimitChecks;
}

export function registerAccountRoutes(app: FastifyInstance, { accounts, authenticate, rateLimits }: AccountRoutesDeps): void {
  const createSchema = (method: string) => ({
    operationId: `createAccount${method}`,
    summary: 'Create an account',
    description:
      'Needs no credentials. The AccessCode in the answer is the account\'s only key: it is stored as a digest and ' +
      'cannot be shown again.',
    tags: ['accounts'],
    security: PUBLIC_SECURITY,
    response: { 200: ACCOUNT_RESPONSE, ...errorResponses(Operation.CreateAccount, [429, 503]) },
  });
  const createConfig = { operation: Operation.CreateAccount, countedEvent: CountedEvent.AccountCreated };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    if (rateLimits.applies(request)) await rateLimits.newAccount(request);
    return sendAccount(reply, await accounts.create());
  };
  app.get('/v1/new_account', { config: createConfig, schema: createSchema('') }, create);
  app.post(
    '/v1/new_account',
    {
      config: createConfig,
      schema: { ...createSchema('Post'), response: { ...createSchema('Post').response, ...errorResponses(Operation.CreateAccount, [400, 413, 415, 429, 503]) } },
    },
    create,
  );
  app.head(
    '/v1/new_account',
    {
      config: { operation: Operation.CreateAccount },
      schema: {
        operationId: 'createAccountHead',
        summary: 'Not allowed: HEAD never creates anything',
        security: PUBLIC_SECURITY,
        tags: ['accounts'],
        response: errorResponses(Operation.CreateAccount, [405]),
      },
    },
    methodNotAllowed('GET, POST'),
  );

  const show = async (request: FastifyRequest, reply: FastifyReply) => sendAccount(reply, accountOf(request));
  for (const [path, name] of [['/v1/get_account', 'getAccount'], ['/v1/user_info', 'getUserInfo']] as const) {
    const schema = (method: string) => ({
      operationId: `${name}${method}`,
      summary: 'Get the authenticated account',
      description: path === '/v1/user_info' ? 'Alias of /v1/get_account.' : 'Also served as /v1/user_info.',
      tags: ['accounts'],
      security: ACCESS_CODE_SECURITY,
      querystring: AuthQuery,
      response: { 200: ACCOUNT_RESPONSE, ...errorResponses(Operation.GetAccount, [400, 401, 429, 503]) },
    });
    const config = { operation: Operation.GetAccount };
    app.get(path, { config, onRequest: authenticate, schema: schema('') }, show);
    app.head(path, { config, onRequest: authenticate, schema: schema('Head') }, show);
  }
}
