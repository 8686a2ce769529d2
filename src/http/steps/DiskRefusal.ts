import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Step } from "./Step.js"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Context, Effect, Either, Option } from "effect"
import { CurrentRequest } from "../../common/RequestContext.js"
import type { DiskSpaceService } from "../../status/DiskSpace.js"
import { errorResponse } from "./ErrorEnvelope.js"

/** Methods that change something: refused while the disk is below its reserve (reads go on). */
const WRITES: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** Revoking a key: a stolen one must be stoppable while the disk is low (the revocation is one small update). */
const isKeyRevocation = (method: string, url: string) => method === "DELETE" && url.split("?", 1)[0] === "/api/v1/auth/keys"

/**
 * While the disk is below its reserve, a write with a valid credential (or none) is refused before it is routed: 507
 * with the reason. A bad credential still gets its 401. Key revocations go on. (Webhook deliveries and MCP messages
 * do not take this step: see src/http/Pipeline.ts.)
 */
export const refuseWritesWhileDiskLow =
  (disk: DiskSpaceService): Step =>
  (app) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>((fiber) => {
      const { method, url } = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      if (!WRITES.has(method) || isKeyRevocation(method, url) || Either.isLeft(fiber.getFiberRef(CurrentRequest).identity)) return app
      const refused = disk.writesRefused()
      return Option.isSome(refused) ? Effect.succeed(errorResponse("InsufficientStorage", refused.value)) : app
    })
