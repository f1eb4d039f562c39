/**
 * Column lists that map rows to the record types (store.ts, admin.ts), shared by both
 * engines: SQLite accepts the double-quoted aliases PostgreSQL needs to keep their case, so
 * one spelling serves both and a renamed field changes in one place.
 */

/** A `LinkRecord`. */
export const LINK_COLUMNS = 'short_code AS "shortCode", points_to AS "pointsTo", created_by AS "createdBy", accesses';

/** An `AccountRecord`. */
export const ACCOUNT_COLUMNS = 'uid, date_created AS "dateCreated", max_links AS "maxLinks", disabled';

/** An `AdminAccount`. */
export const ADMIN_ACCOUNT_COLUMNS = `${ACCOUNT_COLUMNS}, link_count AS "linkCount"`;

