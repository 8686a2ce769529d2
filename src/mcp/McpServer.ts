import { Effect, Either, Option, Schema } from "effect"
import { type Access, canAccess, CurrentPrincipal, isAdmin, labSlugs, type Principal } from "../auth/Principal.js"
import { type DomainError, InvalidField, isDomainError, OutOfSpace } from "../common/DomainErrors.js"
import { jsonIssue, jsonProblem } from "../common/TextHygiene.js"
import { Labs } from "../labs/Labs.js"
import { DiskSpace } from "../status/DiskSpace.js"
import * as JsonRpc from "./JsonRpc.js"
import { accessCounted } from "./LabAccess.js"
import { type McpTool, type Resolve, type Toolset, TOOLSETS, type ToolCall } from "./McpTool.js"
import { makeResources } from "./Resources.js"
import { toolFailure, toolSuccess } from "./ToolResults.js"
import { chatTools } from "./tools/ChatTools.js"
import { datasetTools } from "./tools/DatasetTools.js"
import { experimentTools } from "./tools/ExperimentTools.js"
import { fileTools } from "./tools/FileTools.js"
import { knowledgeTools } from "./tools/KnowledgeTools.js"
import { memoryTools } from "./tools/MemoryTools.js"
import { paperTools } from "./tools/PaperTools.js"
import { searchTools } from "./tools/SearchTools.js"
import { syncTools } from "./tools/SyncTools.js"
import { taskTools } from "./tools/TaskTools.js"

/** Protocol versions this server speaks, newest first; a client asking for another is answered with the newest. */
export const PROTOCOL_VERSIONS = ["2025-06-18", "2025-03-26"] as const
export const SERVER_INFO = { name: "lab-service", version: "0.1.0" }

const INSTRUCTIONS =
  "Tools over one research lab: its files (kept in sync with a git repository), sync status, search, tasks, " +
  "experiments (create, queue, end, log and read metrics), knowledge (write and read back what the lab learned), " +
  "agents' memory (remember, recall), papers and their lifecycle, datasets, and chats (append messages, promote an outcome). " +
  "Every tool takes labId (the lab's id or slug); leave it out when your credential names a single lab. " +
  "Lists page: pass nextCursor back as cursor."

/** What the client chose on the endpoint's URL: `?toolsets=files,tasks` (default all) and `?readonly=1`. */
export interface Offer {
  readonly toolsets: ReadonlySet<Toolset>
  readonly readOnly: boolean
}

const isToolset = (s: string): s is Toolset => TOOLSETS.some((t) => t === s)

/** The offer a request's query asks for; unknown toolset names are an error naming them. */
export const offerOf = (query: URLSearchParams): Either.Either<Offer, string> => {
  const asked = query.get("toolsets")
  const readOnly = ["1", "true"].includes(query.get("readonly") ?? "")
  if (asked === null || asked.trim() === "") return Either.right({ toolsets: new Set(TOOLSETS), readOnly })
  const names = asked.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const unknown = names.filter((n) => !isToolset(n))
  if (unknown.length > 0) return Either.left(`unknown toolsets ${unknown.slice(0, 5).join(", ")}: use ${TOOLSETS.join(", ")}`)
  return Either.right({ toolsets: new Set(names.filter(isToolset)), readOnly })
}

/** May the principal write anywhere? A credential that can only read is offered only read tools. */
const canWrite = (principal: Principal) => isAdmin(principal) || labSlugs(principal).some((slug) => canAccess(principal, slug, "write"))

const CallParams = Schema.Struct({
  name: Schema.String.pipe(Schema.maxLength(128)),
  arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
const ReadParams = Schema.Struct({ uri: Schema.String.pipe(Schema.maxLength(4096)) })
const ListParams = Schema.Struct({ cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(2048))) })
const InitializeParams = Schema.Struct({ protocolVersion: Schema.String })

type Answer = { readonly _tag: "Result"; readonly value: unknown } | { readonly _tag: "Error"; readonly error: JsonRpc.ProtocolError }

const invalidParams = (id: JsonRpc.RequestId, message: string): Answer => ({
  _tag: "Error",
  error: { code: JsonRpc.INVALID_PARAMS, message, id }
})

/**
 * The MCP edge's methods over the lab's services: tools, resources, and the protocol's own (initialize, ping). Every
 * tool call checks the credential against the lab as a REST request does (Labs.accessAs: same refusal, same budget).
 */
export const makeMcpServer = Effect.gen(function* () {
  const labs = yield* Labs
  const disk = yield* DiskSpace
  const tools: ReadonlyArray<McpTool> = (yield* Effect.all([
    fileTools,
    syncTools,
    searchTools,
    taskTools,
    experimentTools,
    knowledgeTools,
    memoryTools,
    paperTools,
    datasetTools,
    chatTools
  ])).flat()
  const byName = new Map(tools.map((t) => [t.name, t]))
  const resources = yield* makeResources

  const offered = (offer: Offer, principal: Principal) =>
    tools.filter((t) => offer.toolsets.has(t.toolset) && (t.access === "read" || (!offer.readOnly && canWrite(principal))))

  const describe = (t: McpTool) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
    annotations: {
      readOnlyHint: t.access === "read",
      destructiveHint: t.hints.destructive,
      idempotentHint: t.hints.idempotent,
      openWorldHint: t.hints.openWorld
    }
  })

  const resolve =
    (principal: Principal): Resolve =>
    (labRef: string | undefined, access: Access): Effect.Effect<ToolCall, DomainError> => {
      const slugs = labSlugs(principal)
      const ref = labRef ?? (slugs.length === 1 ? slugs[0] : undefined)
      if (ref === undefined) {
        return Effect.fail(
          new InvalidField({ field: "labId", problem: `is required: this credential names ${slugs.length === 0 ? "no lab" : `${slugs.length} labs`}` })
        )
      }
      return Effect.map(accessCounted(labs, principal, ref, access), (lab) => ({ labId: lab.id, lab, principal, actor: principal.id, authorName: principal.name }))
    }

  const callTool = (id: JsonRpc.RequestId, params: unknown, offer: Offer, principal: Principal) =>
    Either.match(Schema.decodeUnknownEither(CallParams)(params), {
      onLeft: () => Effect.succeed(invalidParams(id, "tools/call needs {name, arguments}")),
      onRight: ({ name, arguments: args }): Effect.Effect<Answer> => {
        const tool = byName.get(name)
        if (tool === undefined || !offer.toolsets.has(tool.toolset) || (offer.readOnly && tool.access === "write")) {
          return Effect.succeed(invalidParams(id, `unknown tool ${name.slice(0, 128)}: tools/list names the tools offered here`))
        }
        // the text rules every REST body meets (no NUL, no lone surrogate, bounded depth), as a tool error naming the field
        const hostile = jsonIssue(args ?? {})
        if (hostile !== undefined) return Effect.succeed({ _tag: "Result", value: toolFailure(new InvalidField(hostile)) })
        // below the disk's reserve a write is refused, as REST refuses it before routing; reads go on
        const noRoom = tool.access === "write" ? disk.writesRefused() : Option.none()
        if (Option.isSome(noRoom)) return Effect.succeed({ _tag: "Result", value: toolFailure(new OutOfSpace({ reason: noRoom.value })) })
        return tool.call(args ?? {}, resolve(principal)).pipe(
          Effect.provideService(CurrentPrincipal, principal),
          Effect.map(toolSuccess),
          Effect.catchAll((error) => Effect.succeed(toolFailure(error))),
          Effect.map((value): Answer => ({ _tag: "Result", value }))
        )
      }
    })

  const resourceAnswer = <A>(id: JsonRpc.RequestId, effect: Effect.Effect<A, DomainError>) =>
    Effect.match(effect, {
      // a resource has no error result of its own: MCP's "resource not found" (-32002) for what cannot be read
      onFailure: (error): Answer =>
        error._tag === "InvalidField"
          ? invalidParams(id, error.message)
          : { _tag: "Error", error: { code: -32002, message: isDomainError(error) ? error.message : "not found", id } },
      onSuccess: (value): Answer => ({ _tag: "Result", value })
    })

  /** Answer one request (a notification needs none). */
  const answer = (request: Extract<JsonRpc.Incoming, { _tag: "Request" }>, offer: Offer, principal: Principal): Effect.Effect<Answer> => {
    const { id, method, params } = request
    const hostile = method === "tools/call" ? undefined : jsonProblem(params)
    if (hostile !== undefined) return Effect.succeed(invalidParams(id, hostile))
    switch (method) {
      case "initialize": {
        const asked = Option.getOrUndefined(Option.map(Either.getRight(Schema.decodeUnknownEither(InitializeParams)(params)), (p) => p.protocolVersion))
        const protocolVersion = PROTOCOL_VERSIONS.find((v) => v === asked) ?? PROTOCOL_VERSIONS[0]
        return Effect.succeed({
          _tag: "Result",
          value: {
            protocolVersion,
            capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
            serverInfo: SERVER_INFO,
            instructions: INSTRUCTIONS
          }
        })
      }
      case "ping":
        return Effect.succeed({ _tag: "Result", value: {} })
      case "tools/list":
        return Effect.succeed({ _tag: "Result", value: { tools: offered(offer, principal).map(describe) } })
      case "tools/call":
        return callTool(id, params, offer, principal)
      case "resources/templates/list":
        return Effect.succeed({ _tag: "Result", value: resources.templates })
      case "resources/list":
        return Either.match(Schema.decodeUnknownEither(ListParams)(params), {
          onLeft: () => Effect.succeed(invalidParams(id, "resources/list takes {cursor?}")),
          onRight: ({ cursor }) => resourceAnswer(id, resources.list(principal, cursor))
        })
      case "resources/read":
        return Either.match(Schema.decodeUnknownEither(ReadParams)(params), {
          onLeft: () => Effect.succeed(invalidParams(id, "resources/read needs {uri}")),
          onRight: ({ uri }) => resourceAnswer(id, resources.read(principal, uri))
        })
      default:
        return Effect.succeed({ _tag: "Error", error: { code: JsonRpc.METHOD_NOT_FOUND, message: `no method ${method.slice(0, 128)}`, id } })
    }
  }

  return { answer, tools }
})
