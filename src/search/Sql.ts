/**
 * What search queries share with the index that migrations 4-6 (src/db/migrations/) created: its text search
 * configuration and the kinds of records it holds. The migrations wrote these values out as they were; changing one
 * here needs a new migration that rebuilds the index with it.
 */

/** Text search configuration: English stemming and stop words (PostgreSQL and PGlite ship it). */
export const CONFIG = "english"

export const SearchKinds = ["files", "papers", "knowledge", "memory", "tasks", "experiments"] as const
export type SearchKind = (typeof SearchKinds)[number]
