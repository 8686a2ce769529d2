import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Either, FiberRef, Option } from "effect"
import { CurrentRequest } from "../common/RequestContext.js"
import { PublicBaseUrl } from "../sync/Sync.js"
import * as JsonRpc from "./JsonRpc.js"
import { makeMcpServer, offerOf, PROTOCOL_VERSIONS } from "./McpServer.js"

export const MCP_PATH = "/mcp"
/** RFC 9728: where an MCP client learns how to get a credential for this server; also under the path it protects. */
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"

/** The authorization servers the metadata names: JWT_ISSUER when JWTs are accepted, none otherwise. */
export class AuthorizationServers extends Context.Reference<AuthorizationServers>()("AuthorizationServers", {
  defaultValue: (): ReadonlyArray<string> => []
}) {}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => HttpServerResponse.unsafeJson(body, { status, headers })

const under = (base: URL, path: string) => `${base.href.replace(/\/+$/, "")}${path}`

/** Missing or refused credentials: 401 with where to learn how to get one (MCP's authorization, RFC 9728). */
const unauthorized = (base: URL, refused: Option.Option<string>) => {
  const metadata = `Bearer resource_metadata="${under(base, RESOURCE_METADATA_PATH)}"`
  return json(
    {
      error: {
        code: "unauthorized",
        status: 401,
        message: Option.getOrElse(refused, () => "missing credentials: send Authorization: Bearer <API key or JWT>")
      }
    },
    401,
    { "www-authenticate": Option.isSome(refused) ? `${metadata}, error="invalid_token"` : metadata }
  )
}

/**
 * POST /mcp: MCP's streamable HTTP transport, answering each message with JSON (no stream), stateless (any replica
 * answers any message). Behind the request pipeline with steps of its own (src/http/Pipeline.ts): the same identity,
 * rate limits, body limit and request log as REST. GET /mcp is 405 (the route table names POST only).
 */
export const McpRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const server = yield* makeMcpServer
    const base = yield* PublicBaseUrl
    const authorizationServers = yield* AuthorizationServers

    const metadata = json({
      resource: under(base, MCP_PATH),
      authorization_servers: authorizationServers,
      bearer_methods_supported: ["header"],
      resource_name: "Lab Service",
      resource_documentation: under(base, "/docs")
    })
    yield* router.get(RESOURCE_METADATA_PATH, Effect.succeed(metadata))
    yield* router.get(`${RESOURCE_METADATA_PATH}${MCP_PATH}`, Effect.succeed(metadata))

    yield* router.post(
      MCP_PATH,
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { identity } = yield* FiberRef.get(CurrentRequest)
        const principal = Either.getOrElse(identity, () => Option.none())
        if (Option.isNone(principal)) {
          return unauthorized(base, Either.isLeft(identity) ? Option.some(identity.left.message) : Option.none())
        }
        const version = request.headers["mcp-protocol-version"]
        if (version !== undefined && !PROTOCOL_VERSIONS.some((v) => v === version)) {
          return json(
            JsonRpc.error({ code: JsonRpc.INVALID_REQUEST, message: `unsupported MCP-Protocol-Version ${version.slice(0, 40)}: use ${PROTOCOL_VERSIONS.join(" or ")}`, id: null }),
            400
          )
        }
        const offer = offerOf(new URL(request.url, "http://localhost").searchParams)
        if (Either.isLeft(offer)) return json(JsonRpc.error({ code: JsonRpc.INVALID_REQUEST, message: offer.left, id: null }), 400)
        const text = yield* Effect.orElseSucceed(request.text, () => "")
        const message = JsonRpc.parseMessage(text)
        if (Either.isLeft(message)) return json(JsonRpc.error(message.left), 400)
        if (message.right._tag === "Notification") return HttpServerResponse.empty({ status: 202 })
        const answer = yield* server.answer(message.right, offer.right, principal.value)
        return json(answer._tag === "Result" ? JsonRpc.result(message.right.id, answer.value) : JsonRpc.error(answer.error))
      })
    )
  })
)
