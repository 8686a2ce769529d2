import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api, VERSION } from "../Api.js"
import { DatabaseKind } from "../db/DatabaseKind.js"
import { ok } from "../http/Envelope.js"
import { ServiceUnavailable } from "../http/Errors.js"
import { Readiness } from "./Readiness.js"

const startedAt = Date.now()

export const StatusHttp = HttpApiBuilder.group(Api, "status", (handlers) =>
  Effect.gen(function* () {
    const database = yield* DatabaseKind
    return handlers.handle("status", () =>
      ok({
        status: "ok" as const,
        version: VERSION,
        database,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        time: new Date().toISOString()
      })
    )
  })
)

export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const readiness = yield* Readiness
    return handlers
      .handle("healthz", () => ok({ status: "alive" as const }))
      .handle("readyz", () =>
        Effect.flatMap(readiness.check, (reason) =>
          reason === null
            ? ok({ status: "ready" as const })
            : Effect.fail(new ServiceUnavailable({ message: `not ready: ${reason}` }))
        )
      )
  })
)
