/**
 * Requests for the event-loop test (test/http/event-loop.test.ts): every string field of every operation of the
 * OpenAPI document (path parameters, query parameters, body fields at any depth, found by walking the contract's
 * schemas as test/support/Fuzz.ts does), one at a time, given long runs of slashes, dots, spaces, Unicode and
 * brackets, alone and inside the field's valid value, while the other fields stay valid so the value is decoded,
 * normalised and matched as far as a real request gets.
 */
import { FastCheck as fc, Option, SchemaAST } from "effect"
import { type Context, type Operation, validParts } from "./Fuzz.js"

export type FieldPath = ReadonlyArray<string | number>

export interface Field {
  readonly where: "path" | "query" | "body"
  readonly path: FieldPath
  /** The schema the field's value is decoded with (none for a path parameter the contract leaves a plain string). */
  readonly schema?: SchemaAST.AST
}

export interface Probe {
  readonly label: string
  readonly method: string
  /** Path and query, encoded. */
  readonly url: string
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
}

/** An operation's query and body as a valid request has them, and its path parameters' values. */
export interface Base {
  readonly query: Record<string, unknown>
  readonly body: unknown
  readonly params: Readonly<Record<string, string>>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The paths of the string leaves of a schema's wire side (arrays by their first element, records by a key `k`). */
const stringLeaves = (ast: SchemaAST.AST, path: FieldPath, depth: number, out: Array<Leaf>, field?: SchemaAST.AST): void => {
  if (depth > 4) return
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      out.push({ path, schema: field ?? ast })
      return
    case "Refinement":
    case "Transformation":
      return stringLeaves(ast.from, path, depth, out, field ?? ast)
    case "Union":
      for (const member of ast.types) stringLeaves(member, path, depth, out, field)
      return
    case "TypeLiteral":
      for (const p of ast.propertySignatures) stringLeaves(p.type, [...path, String(p.name)], depth + 1, out)
      for (const i of ast.indexSignatures) stringLeaves(i.type, [...path, "k"], depth + 1, out)
      return
    case "TupleType":
      ast.elements.forEach((e, n) => stringLeaves(e.type, [...path, n], depth + 1, out))
      for (const r of ast.rest) stringLeaves(r.type, [...path, 0], depth + 1, out)
      return
    case "Suspend":
      return stringLeaves(ast.f(), path, depth + 1, out)
    default:
      return
  }
}

interface Leaf {
  readonly path: FieldPath
  readonly schema: SchemaAST.AST
}

/** Every string field of the operation: path parameters, query parameters and body fields. */
export const stringFields = (op: Operation): ReadonlyArray<Field> => {
  const found = new Map<string, Field>()
  const add = (where: Field["where"], schema: Option.Option<{ readonly ast: SchemaAST.AST }>) =>
    Option.map(schema, (s) => {
      const out: Array<Leaf> = []
      // the type side's refinements and transformations are the schema a field is decoded with
      stringLeaves(s.ast, [], 0, out)
      for (const { path, schema } of out) found.set(`${where}:${path.join(".")}`, { where, path, schema })
    })
  for (const name of op.params) found.set(`path:${name}`, { where: "path", path: [name] })
  add("query", op.query)
  add("body", op.payload)
  return [...found.values()]
}

/** Candidates for the operation's valid request, from the contract's schemas and the fixture. */
export const bases = (op: Operation, context: Context, count: number, seed: number): ReadonlyArray<Base> => {
  const resource = op.path.split("/")[3] ?? ""
  const known = op.id === "webhooks.receive" ? "github" : (context.existing[resource] ?? "missing_0000000000000000")
  const params = Object.fromEntries(op.params.map((name) => [name, known]))
  return fc.sample(validParts(op, context), { numRuns: count, seed }).map((parts) => ({ ...parts, params }))
}

/**
 * Runs that make a regular expression backtrack or a normaliser loop: separators a path, URL or address is split on,
 * whitespace a trim eats, what PostgreSQL's text search parser backtracks over (`~/`, `a_`, `<!--`), characters
 * several code units long or ignored by a filesystem, and brackets.
 */
export const RUNS: ReadonlyArray<string> = ["/", ".", " ", "/.", "~/", "a_", "<!--", "@", "𝕏", "\u200c", "e\u0301", "{[("]

const repeatWithin = (run: string, budget: number, cost: (s: string) => number) => run.repeat(Math.max(1, Math.floor(budget / cost(run))))

/**
 * The adversarial values of a field whose valid value is `valid`: each run alone (then a character that stops a match
 * anchored at the end), and inside the valid value (then a space): as long as `budget` allows, `cost` measuring them.
 */
export const adversarialValues = (
  valid: string,
  budget: number,
  cost: (s: string) => number
): ReadonlyArray<{ readonly label: string; readonly value: string }> =>
  RUNS.flatMap((run) => {
    const shown = JSON.stringify(run)
    const long = repeatWithin(run, budget - cost(valid) - 1, cost)
    return [
      { label: `${shown}×${long.length / run.length}+"!"`, value: `${long}!` },
      { label: `valid+${shown}×${long.length / run.length}+" "`, value: `${valid}${long} ` }
    ]
  })

/** Query values keep their slashes as sent (they must reach the handler as they are). */
const encodeQuery = (value: string) => encodeURIComponent(value).replace(/%2F/g, "/")

const setAt = (root: unknown, path: FieldPath, value: unknown): unknown => {
  const [head, ...rest] = path
  if (head === undefined) return value
  if (typeof head === "number") {
    const array = Array.isArray(root) ? [...root] : []
    array[head] = setAt(array[head], rest, value)
    return array
  }
  const record = isRecord(root) ? { ...root } : {}
  record[head] = setAt(record[head], rest, value)
  return record
}

const getAt = (root: unknown, path: FieldPath): unknown =>
  path.reduce<unknown>((at, key) => (typeof key === "number" ? (Array.isArray(at) ? at[key] : undefined) : isRecord(at) ? at[key] : undefined), root)

const urlOf = (op: Operation, params: Readonly<Record<string, string>>, query: Record<string, unknown>) => {
  const path = op.params.reduce((p, name) => p.replace(`{${name}}`, encodeURIComponent(params[name] ?? "")), op.path)
  const search = Object.entries(query)
    .flatMap(([key, value]) =>
      value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v) => `${encodeURIComponent(key)}=${encodeQuery(String(v))}`)
    )
    .join("&")
  return search === "" ? path : `${path}?${search}`
}

/** The valid request itself. */
export const baseProbe = (op: Operation, base: Base): Probe => ({
  label: "valid",
  method: op.method,
  url: urlOf(op, base.params, base.query),
  ...(base.body === undefined ? {} : { body: JSON.stringify(base.body) })
})

/** Body strings this long; URL parts as long as a request line can be (Node's header limit is 16 KiB). */
const BODY_BUDGET = 19_000
const URL_BUDGET = 12_000

/** Stands for a JSON value JSON.stringify cannot write (too deep for its stack), put in the text after. */
const DEEP = "\u0001deep\u0001"
/** `levels` arrays deep: nested brackets as a JSON value rather than inside a string. */
const deepText = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`

/** The adversarial requests of one field of the operation, the rest of the request as `base` has it. */
export const probes = (op: Operation, base: Base, field: Field): ReadonlyArray<Probe> => {
  const name = `${field.where}.${field.path.join(".")}`
  const validOf = (value: unknown) => (typeof value === "string" ? value : "")
  switch (field.where) {
    case "path": {
      const key = String(field.path[0])
      return adversarialValues(validOf(base.params[key]), URL_BUDGET, (s) => encodeURIComponent(s).length).map(({ label, value }) => ({
        label: `${name}=${label}`,
        method: op.method,
        url: urlOf(op, { ...base.params, [key]: value }, base.query),
        ...(base.body === undefined ? {} : { body: JSON.stringify(base.body) })
      }))
    }
    case "query": {
      const valid = validOf(getAt(base.query, field.path))
      return adversarialValues(valid, URL_BUDGET, (s) => encodeQuery(s).length).map(({ label, value }) => ({
        label: `${name}=${label}`,
        method: op.method,
        url: urlOf(op, base.params, { ...base.query, [String(field.path[0])]: value }),
        ...(base.body === undefined ? {} : { body: JSON.stringify(base.body) })
      }))
    }
    case "body": {
      const valid = validOf(getAt(base.body, field.path))
      const values: ReadonlyArray<{ readonly label: string; readonly value: unknown }> = [
        ...adversarialValues(valid, BODY_BUDGET, (s) => s.length),
        { label: "[]×5000 (a JSON value)", value: DEEP }
      ]
      return values.map(({ label, value }) => ({
        label: `${name}=${label}`,
        method: op.method,
        url: urlOf(op, base.params, base.query),
        body: JSON.stringify(setAt(base.body, field.path, value)).replace(JSON.stringify(DEEP), deepText(5_000))
      }))
    }
  }
}
