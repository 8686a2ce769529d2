import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Either, Schema } from "effect"
import { Api } from "../Api.js"
import { Envelope, ok, okPage, respondWith } from "../http/Envelope.js"
import { writing } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { cursorFromString, pageQueryWith } from "../db/Paging.js"
import { Paper } from "./Paper.js"
import { Papers } from "./Papers.js"

/** Versions are listed newest first by number; the cursor is the last number seen. */
const VersionCursor = cursorFromString(Schema.Struct({ version: Schema.Int.pipe(Schema.between(0, 2 ** 31 - 1)) }))
const decodeVersionCursor = Schema.decodeUnknownEither(VersionCursor)
const encodeVersionCursor = Schema.encodeSync(VersionCursor)

const PaperEnvelope = Envelope(Paper)

export const PapersHttp = HttpApiBuilder.group(Api, "papers", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const papers = yield* Papers
    return labRoutes(handlers, lab, papers)
      .handle("versions", ({ path, urlParams: { labId, ...page } }) =>
        lab.read(labId, (scope) =>
          Effect.gen(function* () {
            const query = yield* pageQueryWith((u) => Either.map(decodeVersionCursor(u), (c) => c.version), page)
            const rows = yield* papers.versions(scope.labId, path.id, query.cursor, query.limit)
            const items = rows.slice(0, query.limit)
            const last = items.at(-1)
            return { items, nextCursor: rows.length > query.limit && last ? encodeVersionCursor({ version: last.version }) : null }
          })
        ).pipe(Effect.flatMap(okPage))
      )
      .handle("publishLoop", ({ path, payload }) =>
        Effect.gen(function* () {
          const { paper, running } = yield* lab.write(payload.labId, (scope) => papers.publish(scope.labId, path.id, scope.actor))
          const body = yield* ok(paper)
          return running ? body : yield* respondWith(PaperEnvelope, body, 200)
        })
      )
      .handle("transition", ({ path, payload: { labId, to, note } }) =>
        writing(lab, labId, (scope) => papers.moveTo(scope.labId, path.id, to, note, scope.actor))
      )
  })
)
