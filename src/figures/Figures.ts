import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { References } from "../common/References.js"
import { Conflict, NotFound } from "../http/Errors.js"
import { type CreateFigure, type Figure, mediaTypeOf, type UpdateFigure } from "./Figure.js"
import { type FigureFilter, FiguresRepo } from "./FiguresRepo.js"

/** The lab's figures: those the sync records from git, and those registered through the API. */
export class Figures extends Effect.Service<Figures>()("Figures", {
  dependencies: [FiguresRepo.Default, ActivityRepo.Default, References.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* FiguresRepo
    const activity = yield* ActivityRepo
    const references = yield* References

    /** The experiment a figure names is one of the lab's (422 otherwise). */
    const checkExperiment = (labId: string, experimentId: string | null | undefined) =>
      experimentId === null || experimentId === undefined ? Effect.void : references.require(labId, "experimentId", "experiment", [experimentId])

    const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const notFound = (id: string) => new NotFound({ message: `no figure ${id} in this lab` })
    const orNotFound = (id: string) => Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: (f: Figure) => Effect.succeed(f) })

    const note = (figure: Figure, kind: string, actor: string, message: string, data: Record<string, unknown> = {}) =>
      activity.record({ labId: figure.labId, kind, ref: figure.id, actor, message, data: { source: figure.source, ...data } })

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), orNotFound(id))

    const create = (labId: string, input: Omit<CreateFigure, "labId">, actor: string) => {
      const now = new Date()
      const location = input.path ?? input.url ?? null
      const figure: Figure = {
        id: newId("fig"),
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
      return inTransaction(
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
    const update = (labId: string, id: string, patch: Omit<UpdateFigure, "labId">, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), orNotFound(id))
          if (patch.experimentId !== current.experimentId) yield* checkExperiment(labId, patch.experimentId)
          const next: Figure = {
            ...current,
            title: patch.title ?? current.title,
            caption: patch.caption === undefined ? current.caption : patch.caption,
            experimentId: patch.experimentId === undefined ? current.experimentId : patch.experimentId
          }
          const changed = (["title", "caption", "experimentId"] as const).filter((k) => next[k] !== current[k])
          if (changed.length === 0) return current
          const figure: Figure = { ...next, updatedAt: new Date() }
          yield* repo.save(figure)
          yield* note(figure, "figure.updated", actor, `Figure “${figure.title}” updated (${changed.join(", ")})`, { changed })
          return figure
        })
      )

    /** Registered figures only: a git figure goes away when its file is deleted in the repository (409). */
    const remove = (labId: string, id: string, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), orNotFound(id))
          if (current.source === "git") {
            return yield* new Conflict({
              message: `figure ${id} is ${current.path} in the linked repository: delete the file in git and the sync removes the figure`
            })
          }
          yield* repo.delete(labId, id)
          yield* note(current, "figure.deleted", actor, `Figure “${current.title}” deleted`)
          return current
        })
      )

    return { list: (labId: string, filter: FigureFilter) => repo.list(labId, filter), get, create, update, remove }
  })
}) {}
