import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import { Conflict, NotFound } from "../http/Errors.js"
import type { CreateDataset, Dataset, UpdateDataset } from "./Dataset.js"
import { type DatasetFilter, DatasetsRepo } from "./DatasetsRepo.js"

/** Changing any of these changes the data itself: the version goes up by one. */
const CONTENT = ["uri", "path", "format", "sizeBytes", "rows"] as const
const METADATA = ["name", "description", "tags"] as const

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

export class Datasets extends Effect.Service<Datasets>()("Datasets", {
  dependencies: [DatasetsRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* DatasetsRepo
    const activity = yield* ActivityRepo

    const inTransaction = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const notFound = (id: string) => new NotFound({ message: `no dataset ${id} in this lab` })
    const orNotFound = (id: string) => Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: (d: Dataset) => Effect.succeed(d) })

    /** A taken name is 409; any other database error is a defect. */
    const nameTaken = (name: string) => (error: unknown) =>
      isUniqueViolation(error) ? Effect.fail(new Conflict({ message: `a dataset named ${name} exists in this lab` })) : Effect.die(error)

    const note = (dataset: Dataset, kind: string, actor: string, message: string, data: Record<string, unknown> = {}) =>
      activity.record({ labId: dataset.labId, kind, ref: dataset.id, actor, message, data: { version: dataset.version, ...data } })

    const get = (labId: string, id: string) => Effect.flatMap(repo.find(labId, id), orNotFound(id))

    const create = (labId: string, input: Omit<CreateDataset, "labId">, actor: string) => {
      const now = new Date()
      const dataset: Dataset = {
        id: newId("ds"),
        labId,
        name: input.name,
        description: input.description,
        uri: input.uri ?? null,
        path: input.path ?? null,
        format: input.format,
        sizeBytes: input.sizeBytes ?? null,
        rows: input.rows ?? null,
        version: 1,
        tags: input.tags,
        createdAt: now,
        updatedAt: now
      }
      return inTransaction(
        Effect.gen(function* () {
          yield* Effect.catchAll(repo.insert(dataset), nameTaken(dataset.name))
          yield* note(dataset, "dataset.created", actor, `Dataset “${dataset.name}” created`, { format: dataset.format })
          return dataset
        })
      )
    }

    const update = (labId: string, id: string, patch: Omit<UpdateDataset, "labId">, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), orNotFound(id))
          const next: Dataset = {
            ...current,
            name: patch.name ?? current.name,
            description: patch.description ?? current.description,
            // the data lives at one place: a new uri clears the path and the other way round
            uri: patch.uri ?? (patch.path !== undefined ? null : current.uri),
            path: patch.path ?? (patch.uri !== undefined ? null : current.path),
            format: patch.format ?? current.format,
            sizeBytes: patch.sizeBytes === undefined ? current.sizeBytes : patch.sizeBytes,
            rows: patch.rows === undefined ? current.rows : patch.rows,
            tags: patch.tags ?? current.tags
          }
          const content = CONTENT.filter((k) => !same(next[k], current[k]))
          const changed = [...METADATA.filter((k) => !same(next[k], current[k])), ...content]
          if (changed.length === 0) return current
          const dataset: Dataset = { ...next, version: current.version + (content.length > 0 ? 1 : 0), updatedAt: new Date() }
          yield* Effect.catchAll(repo.save(dataset), nameTaken(dataset.name))
          yield* note(dataset, "dataset.updated", actor, `Dataset “${dataset.name}” updated (${changed.join(", ")})`, { changed })
          return dataset
        })
      )

    const remove = (labId: string, id: string, actor: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), orNotFound(id))
          yield* repo.delete(labId, id)
          yield* note(current, "dataset.deleted", actor, `Dataset “${current.name}” deleted`)
          return current
        })
      )

    return { list: (labId: string, filter: DatasetFilter) => repo.list(labId, filter), get, create, update, remove }
  })
}) {}
