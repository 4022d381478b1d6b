/**
 * Paged lists: page `page` (from 1) of `perPage` rows. Every offset-paged list reads its rows
 * through these, so a page means the same everywhere.
 */

/** The rows before page `page`. */
export const offsetOf = (page: number, perPage: number): number => (page - 1) * perPage

/** A query's `limit` and `offset` for the page (use with Kysely's `$call`). */
export const paged =
  (page: number, perPage: number) =>
  <Q extends { limit(n: number): Q; offset(n: number): Q }>(query: Q): Q =>
    query.limit(perPage).offset(offsetOf(page, perPage))
