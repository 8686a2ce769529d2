import { String } from "effect"

const memoize = (f: (name: string) => string): ((name: string) => string) => {
  const cache = new Map<string, string>()
  return (name) => {
    let converted = cache.get(name)
    if (converted === undefined) {
      converted = f(name)
      // names come from the schema and the queries, a bounded set; the cap guards against anything else
      if (cache.size < 10_000) cache.set(name, converted)
    }
    return converted
  }
}

/**
 * Column names are snake_case in SQL and camelCase in rows. Every row of every
 * result renames every column: convert each name once, not once per row.
 */
export const snakeToCamel = memoize(String.snakeToCamel)
export const camelToSnake = memoize(String.camelToSnake)
