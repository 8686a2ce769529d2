import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps, resourceReads } from "../activity/ResourceService.js"
import { applyPatch, changedFields, insertLogged, removeLogged } from "../activity/Changes.js"
import { orNotFound } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateKnowledge, type KnowledgeEntry, KnowledgeId, type Source, type UpdateKnowledge } from "./Knowledge.js"
import { KnowledgeRepo } from "./KnowledgeRepo.js"
import { inTransaction } from "../db/Transaction.js"

const FIELDS = ["title", "body", "sources", "tags"] as const

const RESOURCE = "knowledge entry"

interface Deps extends ResourceDeps<KnowledgeRepo> {
  readonly references: References
}

/** A source whose ref is one of this service's ids (paper_…, chats/chat_…) cites a resource of the lab (422 otherwise). */
const checkSources = (
  references: References,
  labId: LabId,
  sources: ReadonlyArray<Source>,
  cited: ReadonlySet<string | undefined> = new Set()
) =>
  Effect.forEach(
    sources,
    (source, i) => (cited.has(source.ref) ? Effect.void : references.requireIfId(labId, `sources.${i}.ref`, source.ref)),
    { discard: true }
  )

/** Create an entry; `data` is added to its activity entry (a promotion names its chat). Joins the caller's transaction. */
const create = (
  { sql, repo, activity, references }: Deps,
  labId: LabId,
  input: Omit<CreateKnowledge, "labId">,
  actor: string,
  data: Record<string, unknown> = {}
) =>
  Effect.gen(function* () {
    yield* checkSources(references, labId, input.sources)
    const now = new Date()
    const entry: KnowledgeEntry = { id: KnowledgeId.make(newId("kn")), labId, ...input, createdAt: now, updatedAt: now }
    yield* insertLogged(activity, repo.insert, entry, actor, {
      kind: "knowledge.created",
      message: `Added knowledge: ${entry.title}`,
      data: { title: entry.title, tags: entry.tags, ...data }
    })
    return entry
  }).pipe(inTransaction(sql))

const update = (
  { sql, repo, activity, references }: Deps,
  labId: LabId,
  id: KnowledgeId,
  patch: Omit<UpdateKnowledge, "labId">,
  actor: string
) =>
  Effect.gen(function* () {
    const current = yield* orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))
    // refs it cited already stay acceptable (the resource may be gone since)
    const cited = new Set(current.sources.map((s) => s.ref))
    if (patch.sources !== undefined) yield* checkSources(references, labId, patch.sources, cited)
    const next = applyPatch(current, patch, FIELDS)
    const changed = changedFields(FIELDS, current, next)
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
  }).pipe(inTransaction(sql))

const remove = (deps: Deps, labId: LabId, id: KnowledgeId, actor: string) =>
  removeLogged(deps, { labId, resource: RESOURCE, id, actor }, deps.repo.remove(labId, id), (deleted) => ({
    kind: "knowledge.deleted",
    message: `Deleted knowledge: ${deleted.title}`,
    data: { title: deleted.title }
  }))

/** The lab's curated knowledge: entries written directly or promoted from a chat's outcome. */
export class KnowledgeBase extends Effect.Service<KnowledgeBase>()("KnowledgeBase", {
  dependencies: [KnowledgeRepo.Default, ActivityRepo.Default, References.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(KnowledgeRepo), references: References })
    return {
      ...resourceReads(RESOURCE, deps.repo),
      create: (labId: LabId, input: Omit<CreateKnowledge, "labId">, actor: string, data?: Record<string, unknown>) =>
        create(deps, labId, input, actor, data),
      update: (labId: LabId, id: KnowledgeId, patch: Omit<UpdateKnowledge, "labId">, actor: string) =>
        update(deps, labId, id, patch, actor),
      remove: (labId: LabId, id: KnowledgeId, actor: string) => remove(deps, labId, id, actor)
    }
  })
}) {}
