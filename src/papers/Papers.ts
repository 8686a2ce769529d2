import { SqlClient } from "@effect/sql"
import { Cause, Effect, FiberSet, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { allows, transition } from "../common/StateMachine.js"
import { FilesRepo } from "../files/FilesRepo.js"
import { FiguresRepo } from "../figures/FiguresRepo.js"
import { Conflict, NotFound } from "../http/Errors.js"
import {
  type CreatePaper,
  LOOP_NEXT,
  type LoopStep,
  type Paper,
  type PaperLoop,
  PaperMachine,
  type PaperStatus,
  type PaperVersion,
  type UpdatePaper
} from "./Paper.js"
import { type PaperFilter, PapersRepo } from "./PapersRepo.js"

const IDLE: PaperLoop = { runId: null, status: "idle", steps: [], startedBy: null, startedAt: null, finishedAt: null, error: null }

/** What a status change is called in the activity feed. */
const VERB: Record<PaperStatus, string> = {
  draft: "returned to draft",
  submitted: "submitted",
  in_review: "is in review",
  revision_requested: "needs a revision",
  accepted: "accepted",
  published: "published",
  withdrawn: "withdrawn"
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The fields a PATCH may change. */
const CONTENT = ["title", "abstract", "authors", "files"] as const

/** The outcome of POST /papers/{id}/publish-loop: `running` answers 202, otherwise 200 (already published). */
export interface LoopStart {
  readonly paper: Paper
  readonly running: boolean
}

/**
 * Papers: CRUD, the status machine, published versions, and the publish loop.
 *
 * The publish loop is a fiber per run. Each step is its own transaction that
 * locks the paper, checks that the run is still the current one and still
 * running, checks the paper's files exist in the lab, and moves the status one
 * step toward published, recording the step on the paper and an activity
 * entry. Because every step re-reads the paper under a lock, a repeated start,
 * a withdrawal or a deletion in the middle of a run, or a second process
 * resuming the same run, can never skip or repeat a status.
 */
export class Papers extends Effect.Service<Papers>()("Papers", {
  dependencies: [PapersRepo.Default, FilesRepo.Default, FiguresRepo.Default, ActivityRepo.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PapersRepo
    const files = yield* FilesRepo
    const figures = yield* FiguresRepo
    const activity = yield* ActivityRepo
    const runs = yield* FiberSet.make()
    /** Runs this process drives now (by run id), so a repeated start forks nothing. */
    const driving = new Set<string>()

    const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const notFound = (id: string) => new NotFound({ message: `no paper ${id} in this lab` })

    const lockOrFail = (labId: string, id: string) =>
      Effect.flatMap(
        repo.findForUpdate(labId, id),
        Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed })
      )

    const note = (paper: Paper, kind: string, actor: string, message: string, data: Record<string, unknown> = {}) =>
      activity.record({ labId: paper.labId, kind, ref: paper.id, actor, message, data: { version: paper.version, ...data } })

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

    // ---- the publish loop -------------------------------------------------

    /** Where each of the paper's files is in the lab: a text file, or a binary figure pulled from git. */
    const lookUp = (labId: string, paths: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const present: Array<PaperVersion["files"][number]> = []
        const missing: Array<string> = []
        for (const path of paths) {
          const file = yield* files.find(labId, path)
          if (Option.isSome(file)) {
            present.push({ path, sha: file.value.sha, size: file.value.size })
            continue
          }
          const figure = yield* figures.gitFigure(labId, path)
          if (Option.isSome(figure)) present.push({ path, sha: figure.value.blobId, size: figure.value.size })
          else missing.push(path)
        }
        return { present, missing }
      })

    const finish = (paper: Paper, steps: ReadonlyArray<LoopStep>, now: Date, error: string) =>
      Effect.gen(function* () {
        const failed: Paper = { ...paper, loop: { ...paper.loop, status: "failed", steps, finishedAt: now, error }, updatedAt: now }
        yield* repo.save(failed)
        yield* note(failed, "paper.loop_failed", paper.loop.startedBy ?? "publish-loop", `Publish loop of “${paper.title}” failed: ${error}`, {
          runId: paper.loop.runId,
          status: paper.status
        })
        return false
      })

    /** One step of a run, in one transaction; true when there is more to do. */
    const advance = (labId: string, id: string, runId: string) =>
      inTransaction(
        Effect.gen(function* () {
          const found = yield* repo.findForUpdate(labId, id)
          if (Option.isNone(found)) return false // deleted meanwhile
          const paper = found.value
          if (paper.loop.runId !== runId || paper.loop.status !== "running") return false // stopped or superseded
          const actor = paper.loop.startedBy ?? "publish-loop"
          const now = new Date()
          const steps = [...paper.loop.steps]

          const { present, missing } = yield* lookUp(labId, paper.files)
          if (paper.files.length === 0 || missing.length > 0) {
            const message = paper.files.length === 0 ? "the paper lists no files" : `missing in the lab: ${missing.join(", ")}`
            steps.push(step(now, "check_files", false, paper.status, null, message, missing))
            return yield* finish(paper, steps, now, message)
          }
          if (steps.length === 0) {
            steps.push(step(now, "check_files", true, paper.status, null, `${present.length} file(s) present in the lab`))
          }

          const to = LOOP_NEXT[paper.status]
          if (to === undefined || !allows(PaperMachine, paper.status, to)) {
            return yield* finish(paper, steps, now, `a ${paper.status} paper cannot be published`)
          }
          steps.push(step(now, "advance", true, paper.status, to, `${paper.status} → ${to}`))
          const published = to === "published"
          const next: Paper = {
            ...paper,
            status: to,
            ...(published ? { publishedVersion: paper.version, publishedAt: now } : {}),
            loop: { ...paper.loop, steps, ...(published ? { status: "done" as const, finishedAt: now } : {}) },
            updatedAt: now
          }
          if (published) {
            yield* repo.insertVersion({
              paperId: paper.id,
              labId,
              version: paper.version,
              title: paper.title,
              abstract: paper.abstract,
              authors: paper.authors,
              files: present,
              status: "published",
              publishedAt: now,
              publishedBy: actor
            })
          }
          yield* repo.save(next)
          yield* note(next, `paper.${to}`, actor, `Paper “${next.title}” ${VERB[to]}`, { from: paper.status, to, runId })
          if (published) {
            yield* note(next, "paper.loop_done", actor, `Publish loop of “${next.title}” done: version ${next.version} published`, { runId })
          }
          return !published
        })
      )

    /** A run that broke on a defect is marked failed (when the database lets us). */
    const failRun = (labId: string, id: string, runId: string) =>
      inTransaction(
        Effect.gen(function* () {
          const found = yield* repo.findForUpdate(labId, id)
          if (Option.isNone(found) || found.value.loop.runId !== runId || found.value.loop.status !== "running") return
          yield* finish(found.value, found.value.loop.steps, new Date(), "internal error")
        })
      ).pipe(Effect.catchAllCause(() => Effect.void))

    const drive = (labId: string, id: string, runId: string) =>
      Effect.gen(function* () {
        while (yield* advance(labId, id, runId)) yield* Effect.yieldNow()
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void // shutting down: the run stays running and resumes at the next start
            : Effect.zipRight(Effect.logError(`publish loop ${runId} of paper ${id} failed`, cause), failRun(labId, id, runId))
        ),
        Effect.ensuring(Effect.sync(() => driving.delete(runId)))
      )

    /** Drive a run in the background unless this process already does. */
    const ensureDriven = (labId: string, id: string, runId: string) =>
      Effect.suspend(() => {
        if (driving.has(runId)) return Effect.void
        driving.add(runId)
        return Effect.asVoid(FiberSet.run(runs, drive(labId, id, runId)))
      })

    /**
     * Start the publish loop (202 with the run), or report the one running
     * (202, the same run), or a paper already published (200, nothing to do).
     * A withdrawn paper cannot be published (409).
     */
    const publish = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const start = yield* inTransaction(
          Effect.gen(function* () {
            const current = yield* lockOrFail(labId, id)
            if (current.status === "published") return { paper: current, running: false }
            if (current.loop.status === "running") return { paper: current, running: true }
            if (current.status === "withdrawn") {
              return yield* new Conflict({ message: `paper ${id} is withdrawn, a final state: it cannot be published` })
            }
            const now = new Date()
            const paper: Paper = {
              ...current,
              loop: { runId: newId("run"), status: "running", steps: [], startedBy: actor, startedAt: now, finishedAt: null, error: null },
              updatedAt: now
            }
            yield* repo.save(paper)
            yield* note(paper, "paper.loop_started", actor, `Publish loop of “${paper.title}” started`, {
              runId: paper.loop.runId,
              status: paper.status
            })
            return { paper, running: true }
          })
        )
        const runId = start.paper.loop.runId
        if (start.running && runId !== null) yield* ensureDriven(labId, id, runId)
        return start satisfies LoopStart
      })

    // loops a previous process left running go on where they stopped
    yield* Effect.forkScoped(
      Effect.flatMap(repo.running, (rows) => Effect.forEach(rows, (r) => ensureDriven(r.labId, r.id, r.loopRunId), { discard: true }))
    )

    return {
      list: (labId: string, filter: PaperFilter) => repo.list(labId, filter),
      get,
      create,
      update,
      remove,
      moveTo,
      versions,
      publish
    }
  })
}) {}

const step = (
  at: Date,
  kind: LoopStep["kind"],
  ok: boolean,
  from: PaperStatus | null,
  to: PaperStatus | null,
  message: string,
  missing: ReadonlyArray<string> = []
): LoopStep => ({ at, kind, ok, from, to, message, missing })
