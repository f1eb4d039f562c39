/**
 * The store contract: one suite that every Store implementation must pass unchanged. It
 * drives the real engine through the Store interface only, assumes nothing about which
 * engine it is, and does not rely on the database being empty: every shortcode it uses
 * carries a random per-test suffix, so a backend may share one database between tests.
 *
 * Its parts live in test/store/contract/, one module per concept as the engines are split
 * (src/store/{sqlite,postgres}/); each registers its describe blocks against the fixture.
 */
import { describe } from 'node:test';
import { contractFixture, type OpenedStore } from './contract/helpers.ts';
import { accountContract } from './contract/accounts.ts';
import { linkContract } from './contract/links.ts';
import { countingContract } from './contract/counting.ts';
import { administrationContract } from './contract/administration.ts';
import { raceContract } from './contract/races.ts';
import { detailsContract } from './contract/details.ts';
import { domainsAndRoutingContract } from './contract/domains-and-routing.ts';
import { statsContract } from './contract/stats.ts';
import { webhooksContract } from './contract/webhooks.ts';
import { streamSlotsContract } from './contract/stream-slots.ts';
import { persistenceContract } from './contract/persistence.ts';

export { reopenableStore, type OpenedStore } from './contract/helpers.ts';

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`store contract: ${name}`, () => {
    const fixture = contractFixture(open);
    accountContract(fixture);
    linkContract(fixture);
    countingContract(fixture);
    administrationContract(fixture);
    raceContract(fixture);
    detailsContract(fixture);
    domainsAndRoutingContract(fixture);
    statsContract(fixture);
    webhooksContract(fixture);
    streamSlotsContract(fixture);
    persistenceContract(fixture);
  });
}
