import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { Conflict } from "../http/Errors.js"
import { type CreatePaper, type Paper, type PaperLoop, PaperMachine, type PaperStatus, type UpdatePaper } from "./Paper.js"
import { lockedOrNotFound, noteFor, notFound, step, VERB } from "./PaperSupport.js"
import { type PaperFilter, PapersRepo } from "./PapersRepo.js"
import { PublishLoop } from "./PublishLoop.js"

const IDLE: PaperLoop = { runId: null, status: "idle", steps: [], startedBy: null, startedAt: null, finishedAt: null, error: null }

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The fields a PATCH may change. */
const CONTENT = ["title", "abstract", "authors", "files"] as const

/** Papers: CRUD, the status machine and published versions; the publish loop is PublishLoop.ts. */
export class Papers extends Effect.Service<Papers>()("Papers", {
  dependencies: [PapersRepo.Default, ActivityRepo.Default, PublishLoop.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PapersRepo
    const publishing = yield* PublishLoop
    const note = noteFor(yield* ActivityRepo)
    const lockOrFail = lockedOrNotFound(repo)

    const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const get = (labId: string, id: string) =>
      Effect.flatMap(repo.find(labId, id), Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))

    const create = (labId: string, input: Omit<CreatePaper, "labId">, actor: string) => {
      const now = new Date()
      const paper: Paper = {
        id: newId("paper"),
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
      return inTransaction(
        Effect.gen(function* () {
          yield* repo.insert(paper)
          yield* note(paper, "paper.created", actor, `Paper “${paper.title}” created`, { status: paper.status })
          return paper
        })
      )
    }

    /**
     * Change title, abstract, authors or files. A published version is
     * immutable: a change to a published paper starts the next version as a
     * draft (the published one stays readable at /versions). A withdrawn paper,
     * or one whose publish loop is running, cannot change (409).
     */
    const update = (labId: string, id: string, patch: Omit<UpdatePaper, "labId">, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* lockOrFail(labId, id)
          if (current.loop.status === "running") {
            return yield* new Conflict({ message: `paper ${id} is being published (its publish loop is running): change it when the loop has finished` })
          }
          if (current.status === "withdrawn") {
            return yield* new Conflict({ message: `paper ${id} is withdrawn, a final state: it cannot change` })
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
            const paper: Paper = {
              ...current,
              ...next,
              status: "draft",
              version: current.version + 1,
              publishedAt: null,
              loop: IDLE,
              updatedAt: now
            }
            yield* repo.save(paper)
            yield* note(paper, "paper.version_created", actor, `Paper “${paper.title}” version ${paper.version} started from published version ${current.version}`, {
              from: current.version,
              changed
            })
            return paper
          }
          const paper: Paper = { ...current, ...next, updatedAt: now }
          yield* repo.save(paper)
          yield* note(paper, "paper.updated", actor, `Paper “${paper.title}” updated (${changed.join(", ")})`, { changed })
          return paper
        })
      )

    /** Delete a paper that was never published; published versions are permanent (409). */
    const remove = (labId: string, id: string, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* lockOrFail(labId, id)
          if (current.publishedVersion !== null) {
            return yield* new Conflict({
              message: `paper ${id} has a published version (${current.publishedVersion}): published papers are immutable and stay readable, so it cannot be deleted`
            })
          }
          yield* repo.delete(labId, id)
          yield* note(current, "paper.deleted", actor, `Paper “${current.title}” deleted`, { status: current.status })
          return current
        })
      )

    /**
     * A manual move along the status machine (a reviewer's decision, a
     * resubmission, a withdrawal). published is reached only through the publish
     * loop, which checks the files; while the loop runs only a withdrawal is
     * allowed, and it stops the loop.
     */
    const moveTo = (labId: string, id: string, to: PaperStatus, noteText: string | undefined, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* lockOrFail(labId, id)
          if (to === "published" && current.status !== "published") {
            return yield* new Conflict({
              message: `paper ${id} is ${current.status}: only the publish loop publishes a paper (POST /api/v1/papers/${id}/publish-loop), after checking its files`
            })
          }
          if (current.loop.status === "running" && to !== "withdrawn") {
            return yield* new Conflict({ message: `paper ${id} is being published (its publish loop is running): only a withdrawal can interrupt it` })
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
          yield* repo.save(paper)
          yield* note(paper, `paper.${to}`, actor, `Paper “${paper.title}” ${VERB[to]}`, {
            from: current.status,
            to,
            ...(noteText !== undefined ? { note: noteText } : {})
          })
          if (stopping) yield* note(paper, "paper.loop_failed", actor, `Publish loop of “${paper.title}” stopped: withdrawn`, { runId: loop.runId })
          return paper
        })
      )

    const versions = (labId: string, id: string, before: Option.Option<number>, limit: number) =>
      Effect.zipRight(get(labId, id), repo.versions(labId, id, before, limit))

    return {
      list: (labId: string, filter: PaperFilter) => repo.list(labId, filter),
      get,
      create,
      update,
      remove,
      moveTo,
      versions,
      publish: publishing.publish
    }
  })
}) {}
