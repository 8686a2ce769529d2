import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { NotFound } from "../http/Errors.js"
import type { CreateKnowledge, KnowledgeEntry, Source, UpdateKnowledge } from "./Knowledge.js"
import { type KnowledgeFilter, KnowledgeRepo } from "./KnowledgeRepo.js"

const FIELDS = ["title", "body", "sources", "tags"] as const

/** The lab's curated knowledge: entries written directly or promoted from a chat's outcome. */
export class KnowledgeBase extends Effect.Service<KnowledgeBase>()("KnowledgeBase", {
  dependencies: [KnowledgeRepo.Default, ActivityRepo.Default, References.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* KnowledgeRepo
    const activity = yield* ActivityRepo
    const references = yield* References

    /** A source whose ref is one of this service's ids (paper_…, chats/chat_…) cites a resource of the lab (422 otherwise). */
    const checkSources = (labId: string, sources: ReadonlyArray<Source>, cited: ReadonlySet<string | undefined> = new Set()) =>
      Effect.forEach(
        sources,
        (source, i) => (cited.has(source.ref) ? Effect.void : references.requireIfId(labId, `sources.${i}.ref`, source.ref)),
        { discard: true }
      )

    const notFound = (id: string) => new NotFound({ message: `no knowledge entry ${id} in this lab` })
    const found = <A>(id: string) => (o: Option.Option<A>): Effect.Effect<A, NotFound> => (Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(notFound(id)))

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), found(id))

    /** Create an entry; `data` is added to its activity entry (a promotion names its chat). Joins the caller's transaction. */
    const create = (labId: string, input: Omit<CreateKnowledge, "labId">, actor: string, data: Record<string, unknown> = {}) =>
      Effect.gen(function* () {
        yield* checkSources(labId, input.sources)
        const now = new Date()
        const entry: KnowledgeEntry = { id: newId("kn"), labId, ...input, createdAt: now, updatedAt: now }
        yield* repo.insert(entry)
        yield* activity.record({
          labId,
          kind: "knowledge.created",
          ref: entry.id,
          actor,
          message: `Added knowledge: ${entry.title}`,
          data: { title: entry.title, tags: entry.tags, ...data }
        })
        return entry
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const update = (labId: string, id: string, patch: Omit<UpdateKnowledge, "labId">, actor: string) =>
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), found(id))
        // refs it cited already stay acceptable (the resource may be gone since)
        const cited = new Set(current.sources.map((s) => s.ref))
        if (patch.sources !== undefined) yield* checkSources(labId, patch.sources, cited)
        const next: KnowledgeEntry = {
          ...current,
          title: patch.title ?? current.title,
          body: patch.body ?? current.body,
          sources: patch.sources ?? current.sources,
          tags: patch.tags ?? current.tags
        }
        const changed = FIELDS.filter((f) => JSON.stringify(next[f]) !== JSON.stringify(current[f]))
        if (changed.length === 0) return current
        const updated: KnowledgeEntry = { ...next, updatedAt: new Date() }
        yield* repo.update(updated)
        yield* activity.record({
          labId,
          kind: "knowledge.updated",
          ref: id,
          actor,
          message: `Updated knowledge: ${updated.title} (${changed.join(", ")})`,
          data: { changed }
        })
        return updated
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const remove = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const deleted = yield* Effect.flatMap(repo.delete(labId, id), found(id))
        yield* activity.record({
          labId,
          kind: "knowledge.deleted",
          ref: id,
          actor,
          message: `Deleted knowledge: ${deleted.title}`,
          data: { title: deleted.title }
        })
        return deleted
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list: (labId: string, filter: KnowledgeFilter) => repo.list(labId, filter), get, create, update, remove }
  })
}) {}
