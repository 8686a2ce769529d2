import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../auth/Principal.js"
import { Envelope, ok, okPage, respondWith } from "../http/Envelope.js"
import { cursorFromString, pageQuery, pageQueryWith } from "../http/Pagination.js"
import { Labs } from "../labs/Labs.js"
import { Paper } from "./Paper.js"
import { Papers } from "./Papers.js"

/** Versions are listed newest first by number; the cursor is the last number seen. */
const VersionCursor = cursorFromString(Schema.Struct({ version: Schema.Int.pipe(Schema.between(0, 2 ** 31 - 1)) }))
const decodeVersionCursor = Schema.decodeUnknownEither(VersionCursor)
const encodeVersionCursor = Schema.encodeSync(VersionCursor)

const PaperEnvelope = Envelope(Paper)

export const PapersHttp = HttpApiBuilder.group(Api, "papers", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const papers = yield* Papers
    return handlers
      .handle("list", ({ urlParams: { labId, status, from, to, ...page } }) =>
        Effect.all([labs.access(labId, "read"), pageQuery(page)]).pipe(
          Effect.flatMap(([lab, page]) =>
            papers.list(lab.id, { ...page, status: Option.fromNullable(status), from: Option.fromNullable(from), to: Option.fromNullable(to) })
          ),
          Effect.flatMap(okPage)
        )
      )
      .handle("create", ({ payload: { labId, ...input } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* papers.create(lab.id, input, principal.id))
        })
      )
      .handle("get", ({ path, urlParams }) =>
        labs.access(urlParams.labId, "read").pipe(
          Effect.flatMap((lab) => papers.get(lab.id, path.id)),
          Effect.flatMap(ok)
        )
      )
      .handle("update", ({ path, payload: { labId, ...patch } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* papers.update(lab.id, path.id, patch, principal.id))
        })
      )
      .handle("delete", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(urlParams.labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* papers.remove(lab.id, path.id, principal.id))
        })
      )
      .handle("versions", ({ path, urlParams: { labId, ...page } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "read")
          const query = yield* pageQueryWith((u) => Either.map(decodeVersionCursor(u), (c) => c.version), page)
          const rows = yield* papers.versions(lab.id, path.id, query.cursor, query.limit)
          const items = rows.slice(0, query.limit)
          const last = items.at(-1)
          return yield* okPage({
            items,
            nextCursor: rows.length > query.limit && last ? encodeVersionCursor({ version: last.version }) : null
          })
        })
      )
      .handle("publishLoop", ({ path, payload }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(payload.labId, "write")
          const principal = yield* CurrentPrincipal
          const { paper, running } = yield* papers.publish(lab.id, path.id, principal.id)
          const body = yield* ok(paper)
          return running ? body : yield* respondWith(PaperEnvelope, body, 200)
        })
      )
      .handle("transition", ({ path, payload: { labId, to, note } }) =>
        Effect.gen(function* () {
          const lab = yield* labs.access(labId, "write")
          const principal = yield* CurrentPrincipal
          return yield* ok(yield* papers.moveTo(lab.id, path.id, to, note, principal.id))
        })
      )
  })
)
