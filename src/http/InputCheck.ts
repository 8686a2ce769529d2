import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import { ValidationError } from "./Errors.js"
import { jsonProblem, printable, problemWith } from "../common/TextHygiene.js"
import type { RouteTable } from "./RouteTable.js"

/**
 * What every request must satisfy before it is routed, whatever the route:
 * no NUL and no lone UTF-16 surrogate in any string a client sends (path
 * segments, query names and values, JSON string values and object keys), JSON
 * nested at most MAX_JSON_DEPTH levels, and no number JSON cannot hold (1e400).
 * PostgreSQL text refuses NUL and invalid Unicode, and deep JSON overflows
 * stacks: checked here once, every route (present and future) answers 422
 * naming the field instead of failing in the database. Route groups whose
 * handlers read and check their own bodies (webhooks, MCP messages) take the
 * URL check only (src/http/Pipeline.ts).
 */

/** Percent-decoding as the router does it; undefined for bytes that are not UTF-8. */
const decoded = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/** The first problem of the URL's path segments and query parameters, naming the parameter. */
export const urlProblem = (url: string, routes: RouteTable): string | undefined => {
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
  const segments = path.split("/")
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] ?? ""
    if (!segment.includes("%")) continue
    const value = decoded(segment)
    const problem = value === undefined ? "is not percent-encoded UTF-8" : problemWith(value)
    if (problem !== undefined) return `${routes.parameterAt(path, i) ?? "path"}: ${problem}`
  }
  if (mark === -1) return undefined
  for (const pair of url.slice(mark + 1).split("&")) {
    if (!pair.includes("%")) continue
    const split = pair.indexOf("=")
    const rawKey = split === -1 ? pair : pair.slice(0, split)
    const key = decoded(rawKey.replace(/\+/g, " ")) ?? rawKey
    const keyProblem = problemWith(key)
    if (keyProblem !== undefined) return `query: the parameter name ${printable(key)} ${keyProblem}`
    // an undecodable value reaches the handler as its raw text, which is harmless
    const value = split === -1 ? undefined : decoded(pair.slice(split + 1).replace(/\+/g, " "))
    const problem = value === undefined ? undefined : problemWith(value)
    if (problem !== undefined) return `${printable(key)}: ${problem}`
  }
  return undefined
}

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i

/** The kind of body the request carries that the check reads (the pipeline refuses other types: src/http/steps/MediaType.ts). */
const bodyKind = (request: HttpServerRequest.HttpServerRequest): "json" | "form" | undefined => {
  if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") return undefined
  if (Number(request.headers["content-length"] ?? 0) === 0 && request.headers["transfer-encoding"] === undefined) return undefined
  const type = request.headers["content-type"]
  if (type === undefined || JSON_TYPE.test(type)) return "json"
  return FORM_TYPE.test(type) ? "form" : undefined
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    // malformed JSON is the body decoder's to report
    return undefined
  }
}

/**
 * A form-encoded body (webhooks may send one): every field is a string, and a
 * field holding JSON (GitHub's `payload`) is checked as JSON under its name.
 */
export const formProblem = (text: string): string | undefined => {
  for (const [key, value] of new URLSearchParams(text)) {
    const keyProblem = problemWith(key)
    if (keyProblem !== undefined) return `${printable(key)}: the field name ${keyProblem}`
    const trimmed = value.trimStart()
    const json = trimmed.startsWith("{") || trimmed.startsWith("[") ? parse(value) : undefined
    if (json !== undefined) {
      const problem = jsonProblem(json, [key])
      if (problem !== undefined) return problem
      continue
    }
    const problem = problemWith(value)
    if (problem !== undefined) return `${printable(key)}: ${problem}`
  }
  return undefined
}

/** The URL half of the check, for route groups whose bodies are their handlers' to read (webhooks, MCP messages). */
export const makeUrlCheck = (routes: RouteTable): Effect.Effect<void, ValidationError, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const inUrl = urlProblem(request.url, routes)
    return inUrl === undefined ? Effect.void : Effect.fail(new ValidationError({ message: inUrl }))
  })

/**
 * The check as an effect on the request in context: fails with a 422 naming
 * the field. The body is read with `request.text`, which the request caches, so
 * the route reads the same text again without touching the socket: this must
 * run on the very request object the route is given.
 */
export const makeInputCheck = (routes: RouteTable): Effect.Effect<void, ValidationError, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const inUrl = urlProblem(request.url, routes)
    if (inUrl !== undefined) return Effect.fail(new ValidationError({ message: inUrl }))
    const kind = bodyKind(request)
    if (kind === undefined) return Effect.void
    return request.text.pipe(
      // a body that cannot be read is the route's to report (413 past the limit, 422 when cut)
      Effect.orElseSucceed(() => ""),
      Effect.flatMap((text) => {
        const problem = text === "" ? undefined : kind === "json" ? jsonProblem(parse(text)) : formProblem(text)
        return problem === undefined ? Effect.void : Effect.fail(new ValidationError({ message: problem }))
      })
    )
  })
