import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assertActive, type Account, type AccountService } from '../../accounts/account-service.ts';
import { CountedEvent } from '../../metrics/metrics.ts';
import { Operation } from '../operations.ts';
import { accountBody } from '../presenters.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import { ACCESS_CODE_SECURITY, AccountSchema, AuthQuery, errorResponses, PUBLIC_SECURITY, textResponse } from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';

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
    response: { 200: ACCOUNT_RESPONSE, ...errorResponses(Operation.CreateAccount, [403, 429, 503]) },
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

  const show = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(request);
    assertActive(account);
    return sendAccount(reply, account);
  };
  for (const [path, name] of [['/v1/get_account', 'getAccount'], ['/v1/user_info', 'getUserInfo']] as const) {
    const schema = (method: string) => ({
      operationId: `${name}${method}`,
      summary: 'Get the authenticated account',
      description: path === '/v1/user_info' ? 'Alias of /v1/get_account.' : 'Also served as /v1/user_info.',
      tags: ['accounts'],
      security: ACCESS_CODE_SECURITY,
      querystring: AuthQuery,
      response: { 200: ACCOUNT_RESPONSE, ...errorResponses(Operation.GetAccount, [400, 401, 403, 429, 503]) },
    });
    const config = { operation: Operation.GetAccount };
    app.get(path, { config, onRequest: authenticate, schema: schema('') }, show);
    app.head(path, { config, onRequest: authenticate, schema: schema('Head') }, show);
  }

  app.post(
    '/v1/rotate_access_code',
    {
      config: { operation: Operation.RotateAccessCode },
      onRequest: authenticate,
      schema: {
        operationId: 'rotateAccessCode',
        summary: 'Replace the access code',
        description:
          'Answers the account with a new AccessCode, shown this once. From then on the old code is refused (401) on ' +
          'every process and instance within 1 s.',
        tags: ['accounts'],
        security: ACCESS_CODE_SECURITY,
        querystring: AuthQuery,
        response: { 200: ACCOUNT_RESPONSE, ...errorResponses(Operation.RotateAccessCode, [400, 401, 403, 413, 415, 429, 503]) },
      },
    },
    async (request, reply) => sendAccount(reply, await accounts.rotate(accountOf(request))),
  );
  notAllowedOn(app, '/v1/rotate_access_code', 'POST', Operation.RotateAccessCode, 'rotateAccessCode');

  app.delete(
    '/v1/account',
    {
      config: { operation: Operation.DeleteAccount },
      onRequest: authenticate,
      schema: {
        operationId: 'deleteAccount',
        summary: 'Delete the account and all its links',
        description: 'The account and every link it holds are gone; their shortcodes are free again. Cannot be undone.',
        tags: ['accounts'],
        security: ACCESS_CODE_SECURITY,
        querystring: AuthQuery,
        response: { 200: textResponse('The account is gone', 'Success'), ...errorResponses(Operation.DeleteAccount, [400, 401, 403, 429, 503]) },
      },
    },
    async (request, reply) => {
      await accounts.remove(accountOf(request));
      return reply.type(PLAIN_TEXT).send('Success');
    },
  );
  notAllowedOn(app, '/v1/account', 'DELETE', Operation.DeleteAccount, 'deleteAccount');
}

/** Every other common method on a path that serves one: 405 with Allow, nothing read or changed. */
function notAllowedOn(app: FastifyInstance, path: string, allow: string, operation: string, operationId: string): void {
  const methods = (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((method) => method !== allow);
  for (const method of methods) {
    app.route({
      method,
      url: path,
      config: { operation },
      schema: {
        operationId: `${operationId}${method[0]}${method.slice(1).toLowerCase()}NotAllowed`,
        summary: `Not allowed: use ${allow}`,
        tags: ['accounts'],
        security: PUBLIC_SECURITY,
        response: errorResponses(operation, [405]),
      },
      handler: methodNotAllowed(allow),
    });
  }
}
