/**
 * What a dry-run import predicts, on either engine: it writes nothing, so the cap cannot be
 * asked of the database's conditional update; the prediction follows the same order the
 * engines' imports apply (a taken code first, then the cap).
 */
import type { AdminAccount, ImportLink, ImportOptions, ImportOutcome } from './admin.ts';

/**
 * `account` is the receiving account when one is named, `taken` the codes already held in
 * the database among `rows`.
 */
export function predictImport(
  rows: readonly ImportLink[],
  options: ImportOptions,
  account: AdminAccount | undefined,
  taken: ReadonlySet<string>,
): ImportOutcome[] {
  let free = Infinity;
  if (options.accountUid !== null && !options.raiseCap) {
    if (account === undefined) throw new Error(`there is no account ${options.accountUid}`);
    free = account.maxLinks - account.linkCount - (options.pendingLinks ?? 0);
  }
  const seen = new Set(taken);
  return rows.map((row): ImportOutcome => {
    if (seen.has(row.shortCode)) return 'taken';
    if (free <= 0) return 'cap_reached';
    seen.add(row.shortCode);
    free--;
    return 'imported';
  });
}
