import * as SqlClient from "@effect/sql/SqlClient"
import { Cause, Effect, FiberSet, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { allows } from "../common/StateMachine.js"
import { FilesRepo } from "../files/FilesRepo.js"
import { FiguresRepo } from "../figures/FiguresRepo.js"
import { type LabId, systemLab } from "../labs/LabId.js"
import { LOOP_NEXT, type LoopStep, type Paper, type PaperId, PaperMachine, type PaperVersion } from "./Paper.js"
import { conflict, lockedOrNotFound, type Note, noteFor, step, transactional, VERB } from "./PaperSupport.js"
import { PapersRepo } from "./PapersRepo.js"

/** The outcome of POST /papers/{id}/publish-loop: `running` answers 202, otherwise 200 (already published). */
export interface LoopStart {
  readonly paper: Paper
  readonly running: boolean
}

/** What a step of the loop works with. */
interface Deps {
  readonly repo: PapersRepo
  readonly files: FilesRepo
  readonly figures: FiguresRepo
  readonly note: Note
}

/** Where each of the paper's files is in the lab: a text file, or a binary figure pulled from git. */
const lookUp = (deps: Deps, labId: LabId, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const present: Array<PaperVersion["files"][number]> = []
    const missing: Array<string> = []
    for (const path of paths) {
      const file = yield* deps.files.find(labId, path)
      if (Option.isSome(file)) {
        present.push({ path, sha: file.value.sha, size: file.value.size })
        continue
      }
      const figure = yield* deps.figures.gitFigure(labId, path)
      if (Option.isSome(figure)) present.push({ path, sha: figure.value.blobId, size: figure.value.size })
      else missing.push(path)
    }
    return { present, missing }
  })

/** The run failed: say so on the paper and in the activity feed. */
const finish = (deps: Deps, paper: Paper, steps: ReadonlyArray<LoopStep>, now: Date, error: string) =>
  Effect.gen(function* () {
    const failed: Paper = { ...paper, loop: { ...paper.loop, status: "failed", steps, finishedAt: now, error }, updatedAt: now }
    yield* deps.repo.save(failed)
    yield* deps.note(failed, "paper.loop_failed", paper.loop.startedBy ?? "publish-loop", `Publish loop of “${paper.title}” failed: ${error}`, {
      runId: paper.loop.runId,
      status: paper.status
    })
    return false
  })

/** The paper moves one step toward published (its files found as `present`); true when there is more to do. */
const moveOn = (deps: Deps, paper: Paper, steps: Array<LoopStep>, present: PaperVersion["files"], now: Date) =>
  Effect.gen(function* () {
    const runId = paper.loop.runId
    const actor = paper.loop.startedBy ?? "publish-loop"
    const to = LOOP_NEXT[paper.status]
    if (to === undefined || !allows(PaperMachine, paper.status, to)) {
      return yield* finish(deps, paper, steps, now, `a ${paper.status} paper cannot be published`)
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
      const { labId, version, title, abstract, authors } = paper
      yield* deps.repo.insertVersion({
        paperId: paper.id,
        labId,
        version,
        title,
        abstract,
        authors,
        files: present,
        status: "published",
        publishedAt: now,
        publishedBy: actor
      })
    }
    yield* deps.repo.save(next)
    yield* deps.note(next, `paper.${to}`, actor, `Paper “${next.title}” ${VERB[to]}`, { from: paper.status, to, runId })
    if (published) {
      yield* deps.note(next, "paper.loop_done", actor, `Publish loop of “${next.title}” done: version ${next.version} published`, { runId })
    }
    return !published
  })

/** One step of a run (in the caller's transaction); true when there is more to do. */
const advance = (deps: Deps, labId: LabId, id: PaperId, runId: string) =>
  Effect.gen(function* () {
    const found = yield* deps.repo.findForUpdate(labId, id)
    if (Option.isNone(found)) return false // deleted meanwhile
    const paper = found.value
    if (paper.loop.runId !== runId || paper.loop.status !== "running") return false // stopped or superseded
    const now = new Date()
    const steps = [...paper.loop.steps]
    const { present, missing } = yield* lookUp(deps, labId, paper.files)
    if (paper.files.length === 0 || missing.length > 0) {
      const message = paper.files.length === 0 ? "the paper lists no files" : `missing in the lab: ${missing.join(", ")}`
      steps.push(step(now, "check_files", false, paper.status, null, message, missing))
      return yield* finish(deps, paper, steps, now, message)
    }
    if (steps.length === 0) {
      steps.push(step(now, "check_files", true, paper.status, null, `${present.length} file(s) present in the lab`))
    }
    return yield* moveOn(deps, paper, steps, present, now)
  })

/** Start a run on the locked paper (in the caller's transaction), or say why none is needed. */
const start = (deps: Deps, current: Paper, actor: string) =>
  Effect.gen(function* () {
    if (current.status === "published") return { paper: current, running: false }
    if (current.loop.status === "running") return { paper: current, running: true }
    if (current.status === "withdrawn") {
      return yield* conflict(current.id, `paper ${current.id} is withdrawn, a final state: it cannot be published`)
    }
    const now = new Date()
    const paper: Paper = {
      ...current,
      loop: { runId: newId("run"), status: "running", steps: [], startedBy: actor, startedAt: now, finishedAt: null, error: null },
      updatedAt: now
    }
    yield* deps.repo.save(paper)
    yield* deps.note(paper, "paper.loop_started", actor, `Publish loop of “${paper.title}” started`, {
      runId: paper.loop.runId,
      status: paper.status
    })
    return { paper, running: true }
  })

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
    const inTransaction = transactional(yield* SqlClient.SqlClient)
    const repo = yield* PapersRepo
    const deps: Deps = { repo, files: yield* FilesRepo, figures: yield* FiguresRepo, note: noteFor(yield* ActivityRepo) }
    const lockOrFail = lockedOrNotFound(repo)
    const runs = yield* FiberSet.make()
    /** Runs this process drives now (by run id), so a repeated start forks nothing. */
    const driving = new Set<string>()

    /** A run that broke on a defect is marked failed (when the database lets us). */
    const failRun = (labId: LabId, id: PaperId, runId: string) =>
      inTransaction(
        Effect.gen(function* () {
          const found = yield* repo.findForUpdate(labId, id)
          if (Option.isNone(found) || found.value.loop.runId !== runId || found.value.loop.status !== "running") return
          yield* finish(deps, found.value, found.value.loop.steps, new Date(), "internal error")
        })
      ).pipe(Effect.catchAllCause(() => Effect.void))

    const drive = (labId: LabId, id: PaperId, runId: string) =>
      Effect.gen(function* () {
        while (yield* inTransaction(advance(deps, labId, id, runId))) yield* Effect.yieldNow()
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void // shutting down: the run stays running and resumes at the next start
            : Effect.zipRight(Effect.logError(`publish loop ${runId} of paper ${id} failed`, cause), failRun(labId, id, runId))
        ),
        Effect.ensuring(Effect.sync(() => driving.delete(runId)))
      )

    /** Drive a run in the background unless this process already does. */
    const ensureDriven = (labId: LabId, id: PaperId, runId: string) =>
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
    const publish = (labId: LabId, id: PaperId, actor: string) =>
      Effect.gen(function* () {
        const started = yield* inTransaction(Effect.flatMap(lockOrFail(labId, id), (current) => start(deps, current, actor)))
        const runId = started.paper.loop.runId
        if (started.running && runId !== null) yield* ensureDriven(labId, id, runId)
        return started satisfies LoopStart
      })

    // loops a previous process left running go on where they stopped
    yield* Effect.forkScoped(
      Effect.flatMap(repo.running, (rows) =>
        Effect.forEach(rows, (r) => ensureDriven(systemLab(r.labId), r.id, r.loopRunId), { discard: true })
      )
    )

    return { publish }
  })
}) {}
