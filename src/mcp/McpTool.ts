import * as Tool from "@effect/ai/Tool"
import { Effect, Either, type JSONSchema as JsonSchema, ParseResult, Schema } from "effect"
import type { Access, CurrentPrincipal, Principal } from "../auth/Principal.js"
import { type DomainError, InvalidField } from "../common/DomainErrors.js"
import { LabRef } from "../common/Schemas.js"
import { DEFAULT_LIMIT, MAX_LIMIT, PageParams } from "../db/Paging.js"
import type { CheckedLab, LabId } from "../labs/LabId.js"
import { shownIssue } from "../common/TextHygiene.js"

/** The groups a client may pick with `?toolsets=` (default: all). */
export const TOOLSETS = ["files", "sync", "search", "tasks", "experiments", "knowledge", "memory", "papers", "datasets", "chats"] as const
export type Toolset = (typeof TOOLSETS)[number]

/** What a tool runs with once the credential was checked against the lab it names: as a REST handler's LabScope. */
export interface ToolCall {
  readonly labId: LabId
  readonly lab: CheckedLab
  readonly principal: Principal
  /** who the activity log names: the principal's id */
  readonly actor: string
  /** who a write's commit names as its author: the credential's name */
  readonly authorName: string
}

/** Hints for the agent host (MCP tool annotations); a read tool is never destructive. */
export interface Hints {
  readonly destructive?: boolean
  readonly idempotent?: boolean
  /** true only where the tool reaches the lab's git host */
  readonly openWorld?: boolean
}

/** Who the tool runs for: the lab its `labId` names (or the credential's only lab), checked as REST checks it. */
export type Resolve = (labRef: string | undefined, access: Access) => Effect.Effect<ToolCall, DomainError>

/** A tool of the MCP edge: its contract as MCP lists it, the access it needs, and how it is called. */
export interface McpTool {
  readonly name: string
  readonly toolset: Toolset
  readonly access: Access
  readonly description: string
  readonly inputSchema: JsonSchema.JsonSchema7
  readonly hints: Required<Hints>
  /** Decode the arguments (InvalidField naming the field), check the lab, run; the answer is JSON. */
  readonly call: (args: unknown, resolve: Resolve) => Effect.Effect<unknown, DomainError, CurrentPrincipal>
}

/** The first problem of a tool's arguments, naming the field as a REST 422 does. */
const fieldProblem = (error: ParseResult.ParseError): InvalidField => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error).find((i) => !i.message.startsWith("Expected undefined"))
  const field = issue?.path.map(String).join(".") || "arguments"
  if (issue === undefined) return new InvalidField({ field, problem: "does not fit the tool's input schema" })
  if (issue.message === "is missing") return new InvalidField({ field, problem: "is required" })
  if (issue._tag === "Unexpected") return new InvalidField({ field, problem: "is not a known field" })
  return new InvalidField({ field, problem: shownIssue(issue.message) })
}

/** `limit` and `cursor` as REST lists take them, in JSON (a number, not a query string). */
export const ToolPage = {
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_LIMIT))).annotations({
    description: `page size, default ${DEFAULT_LIMIT}, max ${MAX_LIMIT}`
  }),
  cursor: PageParams.cursor
}

/** A page of a list as tools answer it: the items, and the cursor of the next page (null on the last). */
export const ToolPageOf = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.Struct({ items: Schema.Array(item), nextCursor: Schema.NullOr(Schema.String) })

/** A tool's input: the fields of its REST body (less `labId`) and an optional `labId`; no other field. */
export const toolInput = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct({ labId: Schema.optional(LabRef), ...fields }).annotations({ parseOptions: { onExcessProperty: "error" } })

/**
 * A tool from the Schemas its REST route uses (`input`, made with toolInput from the body's fields), and the answer's
 * schema (`output`, encoded to JSON as REST encodes it).
 */
export const defineTool = <P extends { readonly labId?: string | undefined }, I, A, O>(spec: {
  readonly name: string
  readonly toolset: Toolset
  readonly access: Access
  readonly description: string
  readonly input: Schema.Schema<P, I>
  readonly output: Schema.Schema<A, O>
  readonly hints?: Hints
  readonly run: (params: P, call: ToolCall) => Effect.Effect<A, DomainError, CurrentPrincipal>
}): McpTool => {
  const decode = Schema.decodeUnknownEither(spec.input)
  const encode = Schema.encode(spec.output)
  const read = spec.access === "read"
  return {
    name: spec.name,
    toolset: spec.toolset,
    access: spec.access,
    description: spec.description,
    inputSchema: Tool.getJsonSchemaFromSchemaAst(spec.input.ast),
    hints: {
      destructive: !read && (spec.hints?.destructive ?? false),
      idempotent: read || (spec.hints?.idempotent ?? false),
      openWorld: spec.hints?.openWorld ?? false
    },
    call: (args, resolve) =>
      Either.match(decode(args ?? {}), {
        onLeft: (error) => Effect.fail(fieldProblem(error)),
        onRight: (params) =>
          Effect.flatMap(resolve(params.labId, spec.access), (call) =>
            Effect.flatMap(spec.run(params, call), (answer) => Effect.orDie(encode(answer)))
          )
      })
  }
}
