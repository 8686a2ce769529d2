import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, resourceReads } from "../activity/ResourceService.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateFigure, type Figure, FigureId, mediaTypeOf, type UpdateFigure } from "./Figure.js"
import { FiguresRepo } from "./FiguresRepo.js"
import { inTransaction } from "../db/Transaction.js"

const RESOURCE = "figure"

const newFigure = (labId: LabId, input: Omit<CreateFigure, "labId">): Figure => {
  const now = new Date()
  const location = input.path ?? input.url ?? null
  return {
    id: FigureId.make(newId("fig")),
    labId,
    source: "api",
    title: input.title,
    caption: input.caption ?? null,
    path: input.path ?? null,
    url: input.url ?? null,
    mediaType: location === null ? null : mediaTypeOf(new URL(location, "file:///").pathname),
    size: null,
    blobId: null,
    commit: null,
    experimentId: input.experimentId ?? null,
    createdAt: now,
    updatedAt: now
  }
}

/** The figure with the patch applied, and the fields that changed. */
const patched = (current: Figure, patch: Omit<UpdateFigure, "labId">) => {
  const next: Figure = {
    ...current,
    title: patch.title ?? current.title,
    caption: patch.caption === undefined ? current.caption : patch.caption,
    experimentId: patch.experimentId === undefined ? current.experimentId : patch.experimentId
  }
  const changed = (["title", "caption", "experimentId"] as const).filter((k) => next[k] !== current[k])
  return { figure: { ...next, updatedAt: new Date() }, changed }
}

/** The lab's figures: those the sync records from git, and those registered through the API. */
export class Figures extends Effect.Service<Figures>()("Figures", {
  dependencies: [FiguresRepo.Default, ActivityRepo.Default, References.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity, references } = yield* Effect.all({ ...resourceDeps(FiguresRepo), references: References })

    /** The experiment a figure names is one of the lab's (422 otherwise). */
    const checkExperiment = (labId: LabId, experimentId: string | null | undefined) =>
      experimentId === null || experimentId === undefined ? Effect.void : references.require(labId, "experimentId", "experiment", [experimentId])

    const note = (figure: Figure, kind: string, actor: string, message: string, data: Record<string, unknown> = {}) =>
      activity.record({ labId: figure.labId, kind, ref: figure.id, actor, message, data: { source: figure.source, ...data } })

    const { list, get } = resourceReads(RESOURCE, repo)
    const locked = (labId: LabId, id: FigureId) => orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))

    const create = (labId: LabId, input: Omit<CreateFigure, "labId">, actor: string) => {
      const figure = newFigure(labId, input)
      return inTransaction(sql)(
        Effect.gen(function* () {
          yield* checkExperiment(labId, figure.experimentId)
          yield* repo.insert(figure)
          yield* note(figure, "figure.created", actor, `Figure “${figure.title}” registered`, {
            ...(figure.experimentId !== null ? { experimentId: figure.experimentId } : {})
          })
          return figure
        })
      )
    }

    /** Title, caption and experiment of any figure; the file of a git figure is the repository's. */
    const update = (labId: LabId, id: FigureId, patch: Omit<UpdateFigure, "labId">, actor: string) =>
      inTransaction(sql)(
        Effect.gen(function* () {
          const current = yield* locked(labId, id)
          if (patch.experimentId !== current.experimentId) yield* checkExperiment(labId, patch.experimentId)
          const { figure, changed } = patched(current, patch)
          if (changed.length === 0) return current
          yield* repo.update(figure)
          yield* note(figure, "figure.updated", actor, `Figure “${figure.title}” updated (${changed.join(", ")})`, { changed })
          return figure
        })
      )

    /** Registered figures only: a git figure goes away when its file is deleted in the repository (409). */
    const remove = (labId: LabId, id: FigureId, actor: string) =>
      inTransaction(sql)(
        Effect.gen(function* () {
          const current = yield* locked(labId, id)
          if (current.source === "git") {
            return yield* new StateConflict({
              resource: RESOURCE,
              id,
              problem: `figure ${id} is ${current.path} in the linked repository: delete the file in git and the sync removes the figure`
            })
          }
          yield* repo.remove(labId, id)
          yield* note(current, "figure.deleted", actor, `Figure “${current.title}” deleted`)
          return current
        })
      )

    return { list, get, create, update, remove }
  })
}) {}
