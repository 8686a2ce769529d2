import { HttpApiBuilder } from "@effect/platform"
import { Context, Effect } from "effect"
import { Api, VERSION } from "../Api.js"
import { ok } from "../http/Envelope.js"

/** Which database this instance runs on, for GET /status. */
export class DatabaseKind extends Context.Tag("DatabaseKind")<DatabaseKind, "postgresql" | "pglite">() {}

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
