import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { InvalidField } from "../common/DomainErrors.js"
import { Timestamp } from "../common/Schemas.js"
import { okPage } from "../http/Envelope.js"
import { writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Cursor, cursorFromString, pageQueryWith } from "../db/Paging.js"
import { Telemetry } from "./Telemetry.js"
import { MetricName } from "./TelemetryEvent.js"
import type { TelemetryFilter } from "./TelemetryRepo.js"

/** Raw events page on (timestamp, id); aggregates on (bucket, name). */
const EventCursor = cursorFromString(Cursor)
const AggregateCursor = cursorFromString(Schema.Struct({ bucket: Schema.NullOr(Timestamp), name: MetricName }))
const encodeEventCursor = Schema.encodeSync(EventCursor)
const encodeAggregateCursor = Schema.encodeSync(AggregateCursor)

/** `from` after `to` is a mistake, not an empty answer. */
const checkRange = (from: Date | undefined, to: Date | undefined) =>
  from !== undefined && to !== undefined && from.getTime() > to.getTime()
    ? Effect.fail(new InvalidField({ field: "from", problem: "must not be after to" }))
    : Effect.void

export const TelemetryHttp = HttpApiBuilder.group(Api, "telemetry", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const telemetry = yield* Telemetry
    return handlers
      .handle("query", ({ urlParams: { labId, name, from, to, aggregate = "none", bucket, ...page } }) =>
        lab.read(labId, (scope) =>
          Effect.gen(function* () {
            yield* checkRange(from, to)
            const filter: TelemetryFilter = {
              name: Option.fromNullable(name),
              from: Option.fromNullable(from),
              to: Option.fromNullable(to)
            }
            if (aggregate === "none") {
              if (bucket !== undefined) {
                return yield* new InvalidField({ field: "bucket", problem: "needs an aggregate (avg, sum, min, max or count)" })
              }
              const query = yield* pageQueryWith(Schema.decodeUnknownEither(EventCursor), page)
              const result = yield* telemetry.events(scope.labId, filter, query.cursor, query.limit)
              return yield* okPage({ items: result.items, nextCursor: Option.getOrNull(Option.map(result.next, encodeEventCursor)) })
            }
            const query = yield* pageQueryWith(Schema.decodeUnknownEither(AggregateCursor), page)
            const result = yield* telemetry.aggregates(scope.labId, {
              filter,
              aggregate,
              bucket: Option.fromNullable(bucket),
              cursor: query.cursor,
              limit: query.limit
            })
            return yield* okPage({ items: result.items, nextCursor: Option.getOrNull(Option.map(result.next, encodeAggregateCursor)) })
          })
        )
      )
      .handle("ingest", ({ payload: { labId, events } }) =>
        writing(lab, labId, (scope) => telemetry.ingest(scope.labId, scope.actor, events))
      )
  })
)
