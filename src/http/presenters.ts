/**
 * Domain records as the API shows them. The types are the response schemas' (schemas.ts), so
 * a field added there must be added here; the object literals fix the key order the contract
 * requires.
 */
import type { Account as AccountRecord } from '../accounts/account-service.ts';
import type { AdminAccount as AdminAccountRecord } from '../store/admin.ts';
import type { LinkDetailsRecord, LinkRecord } from '../store/store.ts';
import type { Account, AdminAccount, AdminDomain, Domain, Link, LinkDetails } from './schemas.ts';
import type { DomainRecord, DomainWithLinks } from '../domains/domain-store.ts';
import { linkDetailsData } from '../events/payloads.ts';
import { codeOf } from '../links/link-key.ts';

export function linkBody(link: LinkRecord): Link {
  return { ShortCode: codeOf(link.shortCode), PointsTo: link.pointsTo, CreatedBy: link.createdBy, Accesses: link.accesses };
}

/** The owner's view of a link (LinkDetails), keys in the contract's order. */
export function linkDetailsBody(link: LinkDetailsRecord): LinkDetails {
  return linkDetailsData(link);
}

/** Carries the access code: the route answering it must forbid caching. */
export function accountBody(account: AccountRecord): Account {
  return { Uid: account.uid, AccessCode: account.accessCode, DateCreated: account.dateCreated, MaxLinks: account.maxLinks };
}

/** Never carries an access code: the store keeps only its digest. */
export function adminAccountBody(account: AdminAccountRecord): AdminAccount {
  return {
    Uid: account.uid,
    DateCreated: account.dateCreated,
    MaxLinks: account.maxLinks,
    Links: account.linkCount,
    Disabled: account.disabled,
  };
}

/** A domain for the administrator, keys in the contract's order (§8.1). */
export function adminDomainBody(domain: DomainWithLinks): AdminDomain {
  return {
    Host: domain.host,
    Origin: domain.origin,
    NotFoundUrl: domain.notFoundUrl,
    RootUrl: domain.rootUrl,
    ExpiredUrl: domain.expiredUrl,
    Links: domain.links,
    DateCreated: domain.dateCreated,
  };
}

/** A domain for an account: what it needs to pick one and build its short URLs. */
export function domainBody(domain: Pick<DomainRecord, 'host' | 'origin'>): Domain {
  return { Host: domain.host, Origin: domain.origin };
}
