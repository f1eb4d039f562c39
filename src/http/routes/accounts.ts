import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account, AccountService } from '../../accounts/account-service.ts';
import { Operation } from '../operations.ts';
import type { RateLimitChecks } from '../rate-limits.ts';
import { accountOf, methodNotAllowed, type Authenticate } from '../route-helpers.ts';
import { AccountSchema, AuthQuery } from '../schemas.ts';

/** The Account JSON, keys in contract order. Carries the access code: never cache it. */
function sendAccount(reply: FastifyReply, account: Account) {
  reply.header('cache-control', 'no-store');
  return { Uid: account.uid, AccessCode: account.accessCode, DateCreated: account.dateCreated, MaxLinks: account.maxLinks };
}

export function registerAccountRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  authenticate: Authenticate,
  limits: RateLimitChecks,
): void {
  const createOptions = {
    config: { operation: Operation.CreateAccount },
    schema: {
      summary: 'Create an account',
      description: 'Needs no credentials. The AccessCode in the answer is the account\'s only key.',
      tags: ['accounts'],
      response: { 200: AccountSchema },
    },
  };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    if (limits.applies(request)) await limits.newAccount(request);
    return sendAccount(reply, await accounts.create());
  };
  app.get('/v1/new_account', createOptions, create);
  app.post('/v1/new_account', createOptions, create);
  app.head('/v1/new_account', { config: createOptions.config }, methodNotAllowed('GET, POST'));

  const show = async (request: FastifyRequest, reply: FastifyReply) => sendAccount(reply, accountOf(request));
  for (const path of ['/v1/get_account', '/v1/user_info']) {
    const options = {
      config: { operation: Operation.GetAccount },
      onRequest: authenticate,
      schema: {
        summary: 'Get the authenticated account',
        description: path === '/v1/user_info' ? 'Alias of /v1/get_account.' : 'Also served as /v1/user_info.',
        tags: ['accounts'],
        querystring: AuthQuery,
        response: { 200: AccountSchema },
      },
    };
    app.get(path, options, show);
    app.head(path, options, show);
  }
}
