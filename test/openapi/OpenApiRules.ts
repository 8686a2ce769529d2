/**
 * The rules of Redocly's `recommended` ruleset that can fail on a document HttpApi makes, checked without Redocly:
 * its error-level rules on servers, paths, operations and security, the warnings this service keeps at zero (tag
 * descriptions, 2xx and 4xx responses, unused components), and this service's own: every operation has a description.
 * Schema-level rules (enum and type mismatches, examples) are left to Redocly itself (lint.test.ts).
 */
import { Schema } from "effect"

const Parameter = Schema.Struct({ name: Schema.String, in: Schema.String })
const ParameterRef = Schema.Struct({ $ref: Schema.String })

const Operation = Schema.Struct({
  operationId: Schema.optional(Schema.String),
  summary: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(Schema.String)),
  parameters: Schema.optional(Schema.Array(Schema.Union(Parameter, ParameterRef))),
  security: Schema.optional(Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  responses: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const Document = Schema.Struct({
  openapi: Schema.String,
  info: Schema.Struct({ title: Schema.String, version: Schema.String, description: Schema.optional(Schema.String) }),
  servers: Schema.optional(Schema.Array(Schema.Struct({ url: Schema.String, description: Schema.optional(Schema.String) }))),
  tags: Schema.optional(Schema.Array(Schema.Struct({ name: Schema.String, description: Schema.optional(Schema.String) }))),
  security: Schema.optional(Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  paths: Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }),
  components: Schema.optional(
    Schema.Struct({
      schemas: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      parameters: Schema.optional(Schema.Record({ key: Schema.String, value: Parameter })),
      securitySchemes: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
    })
  )
})
export type Document = typeof Document.Type

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
const decodeOperation = Schema.decodeUnknownSync(Operation)

/** Every `$ref` string anywhere under `value`. */
const refsIn = (value: unknown, into: Array<string> = []): Array<string> => {
  if (Array.isArray(value)) for (const item of value) refsIn(item, into)
  else if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string") into.push(inner)
      else refsIn(inner, into)
    }
  }
  return into
}

const isBlank = (text: string | undefined) => text === undefined || text.trim() === ""

/** The problems found, one line each: `rule: where: what`. None when the document passes. */
export const problemsOf = (raw: unknown): ReadonlyArray<string> => {
  const doc = Schema.decodeUnknownSync(Document)(raw)
  const problems: Array<string> = []
  const report = (rule: string, where: string, what: string) => problems.push(`${rule}: ${where}: ${what}`)

  if (doc.servers === undefined || doc.servers.length === 0) report("no-empty-servers", "#/servers", "no server listed")
  for (const server of doc.servers ?? []) {
    if (server.url !== "/" && server.url.endsWith("/")) report("no-server-trailing-slash", server.url, "ends with /")
    if (/example\.com/.test(server.url)) report("no-server-example.com", server.url, "example.com")
  }

  const tags = new Map((doc.tags ?? []).map((tag) => [tag.name, tag]))
  for (const tag of doc.tags ?? []) if (isBlank(tag.description)) report("tag-description", tag.name, "tag without a description")
  const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}))
  const operationIds = new Map<string, string>()
  const templates = new Map<string, string>()

  for (const [path, item] of Object.entries(doc.paths)) {
    if (path.length > 1 && path.endsWith("/")) report("no-path-trailing-slash", path, "ends with /")
    if (path.includes("?")) report("path-not-include-query", path, "has a query string")
    if (path.includes("{}")) report("path-declaration-must-exist", path, "empty path parameter")
    const template = path.replace(/\{[^}]+\}/g, "{}")
    const same = templates.get(template)
    if (same !== undefined) report("no-identical-paths", path, `identical to ${same}`)
    templates.set(template, path)
    const pathParams = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])

    for (const [method, value] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue
      const where = `${method.toUpperCase()} ${path}`
      const operation = decodeOperation(value)
      const id = operation.operationId
      if (isBlank(id)) report("operation-operationId", where, "no operationId")
      else if (id !== undefined) {
        const other = operationIds.get(id)
        if (other !== undefined) report("operation-operationId-unique", where, `operationId ${id} also names ${other}`)
        operationIds.set(id, where)
        if (!/^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]*$/.test(id)) report("operation-operationId-url-safe", where, id)
      }
      if (isBlank(operation.summary)) report("operation-summary", where, "no summary")
      if (isBlank(operation.description)) report("operation-description", where, "no description")
      for (const tag of operation.tags ?? []) {
        if (!tags.has(tag)) report("operation-tag-defined", where, `tag ${tag} is not declared`)
      }
      // a shared parameter (Idempotency-Key) is a $ref to components.parameters
      const parameters = (operation.parameters ?? []).flatMap((p) => {
        if (!("$ref" in p)) return [p]
        const shared = doc.components?.parameters?.[p.$ref.replace("#/components/parameters/", "")]
        if (shared === undefined) report("no-unresolved-refs", where, `${p.$ref} is not declared`)
        return shared === undefined ? [] : [shared]
      })
      const seen = new Set<string>()
      for (const parameter of parameters) {
        const key = `${parameter.in}:${parameter.name}`
        if (seen.has(key)) report("operation-parameters-unique", where, `${key} twice`)
        seen.add(key)
      }
      for (const name of pathParams) {
        if (!parameters.some((p) => p.in === "path" && p.name === name)) report("path-parameters-defined", where, `{${name}} not declared`)
      }
      for (const parameter of parameters) {
        if (parameter.in === "path" && !pathParams.includes(parameter.name)) {
          report("path-parameters-defined", where, `path parameter ${parameter.name} is not in the path`)
        }
      }
      const statuses = Object.keys(operation.responses)
      if (!statuses.some((s) => /^2/.test(s))) report("operation-2xx-response", where, "no 2xx response")
      if (!statuses.some((s) => /^4/.test(s))) report("operation-4xx-response", where, "no 4xx response")
      for (const requirement of [...(operation.security ?? []), ...(doc.security ?? [])]) {
        for (const scheme of Object.keys(requirement)) {
          if (!schemes.has(scheme)) report("security-defined", where, `security scheme ${scheme} is not declared`)
        }
      }
    }
  }

  // every reference resolves, and every schema is referenced (no-unresolved-refs, no-unused-components)
  const schemas = doc.components?.schemas ?? {}
  const refs = new Set(refsIn(raw))
  const parameters = doc.components?.parameters ?? {}
  for (const ref of refs) {
    const match = /^#\/components\/(schemas|parameters)\/(.+)$/.exec(ref)
    const name = match?.[2]
    const declared = match?.[1] === "parameters" ? parameters : schemas
    if (name === undefined || !(name in declared)) report("no-unresolved-refs", ref, "does not resolve")
  }
  for (const name of Object.keys(parameters)) {
    if (!refs.has(`#/components/parameters/${name}`)) report("no-unused-components", `#/components/parameters/${name}`, "never referenced")
  }
  for (const name of Object.keys(schemas)) {
    if (!refs.has(`#/components/schemas/${name}`)) report("no-unused-components", `#/components/schemas/${name}`, "never referenced")
  }
  return problems
}
