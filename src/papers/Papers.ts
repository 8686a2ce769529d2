import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, type Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceReads } from "../activity/ResourceService.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import type { LabId } from "../labs/LabId.js"
import {
  type CreatePaper,
  type Paper,
  PaperId,
  type PaperLoop,
  PaperMachine,
  type PaperStatus,
  type UpdatePaper
} from "./Paper.js"
import { conflict, lockedOrNotFound, type Note, noteFor, RESOURCE, step, transactional, VERB } from "./PaperSupport.js"
import { PapersRepo } from "./PapersRepo.js"
import { PublishLoop } from "./PublishLoop.js"

const IDLE: PaperLoop = { runId: null, status: "idle", steps: [], startedBy: null, startedAt: null, finishedAt: null, error: null }

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The fields a PATCH may change. */
const CONTENT = ["title", "abstract", "authors", "files"] as const

/** What the operations on a paper work with. */
interface Deps {
  readonly repo: PapersRepo
  readonly note: Note
  readonly lock: ReturnType<typeof lockedOrNotFound>
}

/**
 * Change title, abstract, authors or files (in the caller's transaction). A published version is
 * immutable: a change to a published paper starts the next version as a draft (the published one stays
 * readable at /versions). A withdrawn paper, or one whose publish loop is running, cannot change (409).
 */
const update = (deps: Deps, labId: LabId, id: PaperId, patch: Omit<UpdatePaper, "labId">, actor: string) =>
  Effect.gen(function* () {
    const current = yield* deps.lock(labId, id)
    if (current.loop.status === "running") {
      return yield* conflict(id, `paper ${id} is being published (its publish loop is running): change it when the loop has finished`)
    }
    if (current.status === "withdrawn") {
      return yield* conflict(id, `paper ${id} is withdrawn, a final state: it cannot change`)
    }
    const next = {
      title: patch.title ?? current.title,
      abstract: patch.abstract ?? current.abstract,
      authors: patch.authors ?? current.authors,
      files: patch.files ?? current.files
    }
    const changed = CONTENT.filter((k) => !same(next[k], current[k]))
    if (changed.length === 0) return current
    const now = new Date()
    if (current.status === "published") {
      const paper: Paper = { ...current, ...next, status: "draft", version: current.version + 1, publishedAt: null, loop: IDLE, updatedAt: now }
      yield* deps.repo.save(paper)
      yield* deps.note(paper, "paper.version_created", actor, `Paper “${paper.title}” version ${paper.version} started from published version ${current.version}`, {
        from: current.version,
        changed
      })
      return paper
    }
    const paper: Paper = { ...current, ...next, updatedAt: now }
    yield* deps.repo.save(paper)
    yield* deps.note(paper, "paper.updated", actor, `Paper “${paper.title}” updated (${changed.join(", ")})`, { changed })
    return paper
  })

/**
 * A manual move along the status machine (a reviewer's decision, a resubmission, a withdrawal), in the
 * caller's transaction. published is reached only through the publish loop, which checks the files; while the
 * loop runs only a withdrawal is allowed, and it stops the loop.
 */
const moveTo = (deps: Deps, labId: LabId, id: PaperId, to: PaperStatus, noteText: string | undefined, actor: string) =>
  Effect.gen(function* () {
    const current = yield* deps.lock(labId, id)
    if (to === "published" && current.status !== "published") {
      return yield* conflict(
        id,
        `paper ${id} is ${current.status}: only the publish loop publishes a paper (POST /api/v1/papers/${id}/publish-loop), after checking its files`
      )
    }
    if (current.loop.status === "running" && to !== "withdrawn") {
      return yield* conflict(id, `paper ${id} is being published (its publish loop is running): only a withdrawal can interrupt it`)
    }
    yield* transition(`paper ${id}`, PaperMachine, current.status, to)
    const now = new Date()
    const stopping = current.loop.status === "running"
    const loop: PaperLoop = stopping
      ? {
          ...current.loop,
          status: "failed",
          finishedAt: now,
          error: "the paper was withdrawn while the loop ran",
          steps: [...current.loop.steps, step(now, "stop", false, current.status, to, "stopped: the paper was withdrawn")]
        }
      : current.loop
    const paper: Paper = { ...current, status: to, loop, updatedAt: now }
    yield* deps.repo.save(paper)
    yield* deps.note(paper, `paper.${to}`, actor, `Paper “${paper.title}” ${VERB[to]}`, {
      from: current.status,
      to,
      ...(noteText !== undefined ? { note: noteText } : {})
    })
    if (stopping) yield* deps.note(paper, "paper.loop_failed", actor, `Publish loop of “${paper.title}” stopped: withdrawn`, { runId: loop.runId })
    return paper
  })

/** Delete a paper that was never published (in the caller's transaction); published versions are permanent (409). */
const remove = (deps: Deps, labId: LabId, id: PaperId, actor: string) =>
  Effect.gen(function* () {
    const current = yield* deps.lock(labId, id)
    if (current.publishedVersion !== null) {
      return yield* conflict(
        id,
        `paper ${id} has a published version (${current.publishedVersion}): published papers are immutable and stay readable, so it cannot be deleted`
      )
    }
    yield* deps.repo.remove(labId, id)
    yield* deps.note(current, "paper.deleted", actor, `Paper “${current.title}” deleted`, { status: current.status })
    return current
  })

const newPaper = (labId: LabId, input: Omit<CreatePaper, "labId">): Paper => {
  const now = new Date()
  return {
    id: PaperId.make(newId("paper")),
    labId,
    title: input.title,
    abstract: input.abstract,
    authors: input.authors,
    files: input.files,
    status: "draft",
    version: 1,
    publishedVersion: null,
    publishedAt: null,
    loop: IDLE,
    createdAt: now,
    updatedAt: now
  }
}

/** Papers: CRUD, the status machine and published versions; the publish loop is PublishLoop.ts. */
export class Papers extends Effect.Service<Papers>()("Papers", {
  dependencies: [PapersRepo.Default, ActivityRepo.Default, PublishLoop.Default],
  effect: Effect.gen(function* () {
    const inTransaction = transactional(yield* SqlClient.SqlClient)
    const repo = yield* PapersRepo
    const publishing = yield* PublishLoop
    const deps: Deps = { repo, note: noteFor(yield* ActivityRepo), lock: lockedOrNotFound(repo) }

    const { list, get } = resourceReads(RESOURCE, repo)

    const create = (labId: LabId, input: Omit<CreatePaper, "labId">, actor: string) => {
      const paper = newPaper(labId, input)
      return inTransaction(
        Effect.gen(function* () {
          yield* repo.insert(paper)
          yield* deps.note(paper, "paper.created", actor, `Paper “${paper.title}” created`, { status: paper.status })
          return paper
        })
      )
    }

    return {
      list,
      get,
      create,
      update: (labId: LabId, id: PaperId, patch: Omit<UpdatePaper, "labId">, actor: string) =>
        inTransaction(update(deps, labId, id, patch, actor)),
      remove: (labId: LabId, id: PaperId, actor: string) => inTransaction(remove(deps, labId, id, actor)),
      moveTo: (labId: LabId, id: PaperId, to: PaperStatus, note: string | undefined, actor: string) =>
        inTransaction(moveTo(deps, labId, id, to, note, actor)),
      versions: (labId: LabId, id: PaperId, before: Option.Option<number>, limit: number) =>
        Effect.zipRight(get(labId, id), repo.versions(labId, id, before, limit)),
      publish: publishing.publish
    }
  })
}) {}
