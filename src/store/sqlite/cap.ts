/**
 * The link cap, written once for SQLite: the server's creates and the admin import both run
 * these statements (PostgreSQL's counterpart is `shortlink_take_slot`, migration 3).
 */

/**
 * Grants account `?1` one more link when it holds fewer than MaxLinks (`changes` is 1), or
 * refuses (`changes` is 0). With `?2` = 1 (an import raising the cap) it always grants,
 * lifting MaxLinks to what the account then holds.
 */
export const TAKE_SLOT = `UPDATE accounts
  SET link_count = link_count + 1,
      max_links = CASE WHEN ?2 THEN max(max_links, link_count + 1) ELSE max_links END
  WHERE uid = ?1 AND (?2 OR link_count < max_links)`;

/** Gives account `?` back one slot: its link was deleted, or never inserted. */
export const GIVE_BACK_SLOT = 'UPDATE accounts SET link_count = link_count - 1 WHERE uid = ?';
