/**
 * The rules of webhook registrations (CONTRACT §7.5): what a target and an event list must
 * be, at most 5 per account (settled by the store), the secret shown once and kept sealed,
 * and the check order of §7 (400 for parameters, then 404, then 403).
 */
import { randomBytes } from 'node:crypto';
import { assertActive } from '../accounts/account-service.ts';
import { EVENT_TYPES, type EventType } from '../events/events.ts';
import { DomainError, ErrorCode, invalid } from '../errors.ts';
import type { AccountRecord } from '../accounts/account-store.ts';
import { MAX_WEBHOOKS, type DeliveryRecord, type WebhookRecord, type WebhookStore } from './webhook-store.ts';
import { newSecret, type SecretBox } from './secret-box.ts';
import { checkedAddresses, NOT_PUBLIC, refusalDetail, resolveAll, type ResolveAll } from './target-address.ts';

export const WEBHOOK_URL_MAX = 2000;

/** A new webhook as its creator sees it, once: with its secret. */
export interface CreatedWebhook extends WebhookRecord {
  readonly secret: string;
}

export interface WebhookService {
  create(account: AccountRecord, input: { url: string | undefined; events: string | undefined }): Promise<CreatedWebhook>;
  list(account: AccountRecord): Promise<WebhookRecord[]>;
  delete(account: AccountRecord, id: string | undefined): Promise<void>;
  deliveries(account: AccountRecord, id: string | undefined): Promise<readonly DeliveryRecord[]>;
}

export interface WebhookServiceDeps {
  readonly store: WebhookStore;
  readonly secrets: SecretBox;
  readonly clock: () => Date;
  readonly allowPrivate: boolean;
  /** How names are resolved for the address check (tests give their own). */
  readonly resolve?: ResolveAll;
  /** Where a refused target's detail goes (the host and what it resolved to; never the path or query). */
  readonly log?: (detail: Record<string, unknown>, message: string) => void;
}

const ID_PATTERN = /^wh_[0-9a-f]{24}$/;
const FORBIDDEN_CHARACTER = /[\s\p{Cc}]/u;

/** The event list as sent: comma-separated, each one of the five, no repeats, at least one. */
export function parseEvents(raw: string | undefined): EventType[] {
  if (raw === undefined || raw.trim() === '') throw invalid('the parameter "events" is required');
  const events: EventType[] = [];
  for (const item of raw.split(',').map((part) => part.trim())) {
    if (!(EVENT_TYPES as readonly string[]).includes(item)) {
      throw invalid(`events must be a comma-separated list of ${EVENT_TYPES.join(', ')}; "${item}" is not one`);
    }
    if (events.includes(item as EventType)) throw invalid(`events lists "${item}" twice`);
    events.push(item as EventType);
  }
  return events;
}

/** The shape of a target URL (the addresses are checked apart, after DNS). */
export function parseWebhookUrl(raw: string | undefined): URL {
  if (raw === undefined || raw === '') throw invalid('the parameter "url" is required');
  if (raw.length > WEBHOOK_URL_MAX) throw invalid(`url must be at most ${WEBHOOK_URL_MAX} characters long`);
  if (FORBIDDEN_CHARACTER.test(raw) || !raw.isWellFormed()) throw invalid('url must not contain whitespace or control characters');
  const url = URL.parse(raw);
  if (url === null) throw invalid('url is not a valid absolute URL');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url must use http or https');
  if (url.hostname === '') throw invalid('url must name a host');
  if (url.username !== '' || url.password !== '') throw invalid('url must not contain a user name or password');
  return url;
}

function notFound(): DomainError {
  return new DomainError(ErrorCode.WebhookNotFound, 'no webhook has this id');
}

function notOwner(): DomainError {
  return new DomainError(ErrorCode.NotOwner, 'the webhook belongs to another account');
}

function requireId(id: string | undefined): string {
  if (id === undefined || id === '') throw invalid('the parameter "id" is required');
  return id;
}

export function createWebhookService({ store, secrets, clock, allowPrivate, resolve = resolveAll, log = () => {} }: WebhookServiceDeps): WebhookService {
  return {
    async create(account, input) {
      const url = parseWebhookUrl(input.url);
      const events = parseEvents(input.events);
      try {
        await checkedAddresses(url.hostname, allowPrivate, resolve);
      } catch (error) {
        // One reason for every refusal after DNS: the answer (or its absence) is not the account's to see.
        log({ account: account.uid, host: url.hostname, reason: refusalDetail(error) }, 'webhooks: a target was refused');
        throw invalid(NOT_PUBLIC);
      }
      assertActive(account);
      const secret = newSecret();
      const webhook = {
        id: `wh_${randomBytes(12).toString('hex')}`,
        accountUid: account.uid,
        url: url.href,
        events,
        dateCreated: clock().toISOString(),
      };
      const result = await store.create({ ...webhook, sealedSecret: secrets.seal(secret) });
      if (result === 'cap_reached') {
        throw new DomainError(ErrorCode.WebhookCapReached, `the account already holds its maximum of ${MAX_WEBHOOKS} webhooks`);
      }
      return { ...webhook, secret };
    },

    async list(account) {
      assertActive(account);
      return store.list(account.uid);
    },

    async delete(account, id) {
      const wanted = requireId(id);
      if (!ID_PATTERN.test(wanted)) throw notFound();
      // A disabled account's call is refused after the webhook is found (§7's order).
      if (account.disabled) {
        const found = await store.deliveries(wanted, account.uid);
        if (found.status === 'not_found') throw notFound();
        assertActive(account);
      }
      const result = await store.delete(wanted, account.uid);
      if (result === 'not_found') throw notFound();
      if (result === 'not_owner') throw notOwner();
    },

    async deliveries(account, id) {
      const wanted = requireId(id);
      if (!ID_PATTERN.test(wanted)) throw notFound();
      const result = await store.deliveries(wanted, account.uid);
      if (result.status !== 'found') throw result.status === 'not_found' ? notFound() : notOwner();
      assertActive(account);
      return result.deliveries;
    },
  };
}
