/**
 * Resolving and watching counts, the same on every engine: both sit on the engine's group
 * commit (group-commit.ts), which batches the counts and writes them the engine's way.
 */
import type { LinkRecord, LinkStore, ResolvedLink } from '../links/link-store.ts';
import type { Visit } from '../stats/visit.ts';
import type { GroupCommit } from './group-commit.ts';
import { routingField, type RoutingRow } from './link-rows.ts';

export function countingCalls<T extends LinkRecord & Partial<RoutingRow>>(counter: GroupCommit<T>): Pick<LinkStore, 'resolveLink' | 'watchCounts'> {
  return {
    watchCounts(listener) {
      return counter.watch(listener);
    },

    async resolveLink(shortCode: string, now?: string, visit?: Visit): Promise<ResolvedLink | undefined> {
      const counted = await counter.count(shortCode, now, visit);
      if (counted === undefined) return undefined;
      const { row, accesses, refused } = counted;
      const link: ResolvedLink = {
        shortCode: row.shortCode, pointsTo: row.pointsTo, createdBy: row.createdBy, accesses,
        ...routingField(row),
      };
      return refused === undefined ? link : { ...link, refused };
    },
  };
}
