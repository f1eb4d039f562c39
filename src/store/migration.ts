/**
 * One migration scheme for both engines: each engine's `migrations.ts` holds an ordered list
 * of numbered, forward-only migrations and an `applyMigrations(connection)` that runs the
 * missing ones under the engine's write lock (so instances starting together apply each
 * once) and records each in the `schema_migrations` table. Append new versions; never edit
 * one that has shipped.
 */
export interface Migration {
  /** 1, 2, 3, … in order, without gaps. */
  readonly version: number;
  /** What it does, for people reading the list. */
  readonly name: string;
  readonly sql: string;
}

/** The `schema_migrations` table, the same on both engines. */
export const MIGRATIONS_TABLE = 'schema_migrations';

/** The migrations of `list` not applied yet, given the highest version recorded. */
export function pendingMigrations(list: readonly Migration[], current: number): readonly Migration[] {
  list.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migration ${index + 1} is numbered ${migration.version}`);
  });
  return list.slice(current);
}
