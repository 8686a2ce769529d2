import { SqlClient } from "@effect/sql"
import { Cause, Effect, FiberSet, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { allows } from "../common/StateMachine.js"
import { FilesRepo } from "../files/FilesRepo.js"
import { FiguresRepo } from "../figures/FiguresRepo.js"
import { Conflict } from "../http/Errors.js"
import { LOOP_NEXT, type LoopStep, type Paper, PaperMachine, type PaperVersion } from "./Paper.js"
import { lockedOrNotFound, noteFor, step, VERB } from "./PaperSupport.js"
import { PapersRepo } from "./PapersRepo.js"

/** The outcome of POST /papers/{id}/publish-loop: `running` answers 202, otherwise 200 (already published). */
export interface LoopStart {
  readonly paper: Paper
  readonly running: boolean
}

/**
 * The publish loop: a fiber per run. Each step is its own transaction that
 * locks the paper, checks that the run is still the current one and still
 * running, checks the paper's files exist in the lab, and moves the status one
 * step toward published, recording the step on the paper and an activity
 * entry. Because every step re-reads the paper under a lock, a repeated start,
 * a withdrawal or a deletion in the middle of a run, or a second process
 * resuming the same run, can never skip or repeat a status.
 */
export class PublishLoop extends Effect.Service<PublishLoop>()("PublishLoop", {
  dependencies: [PapersRepo.Default, FilesRepo.Default, FiguresRepo.Default, ActivityRepo.Default],
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PapersRepo
    const files = yield* FilesRepo
    const figures = yield* FiguresRepo
    const note = noteFor(yield* ActivityRepo)
    const lockOrFail = lockedOrNotFound(repo)
    const runs = yield* FiberSet.make()
    /** Runs this process drives now (by run id), so a repeated start forks nothing. */
    const driving = new Set<string>()

    const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

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

    return { publish }
  })
}) {}
