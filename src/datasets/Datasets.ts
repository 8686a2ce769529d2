import { Effect } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps } from "../activity/ResourceService.js"
import { orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import type { LabId } from "../labs/LabId.js"
import { type CreateDataset, type Dataset, DatasetId, type UpdateDataset } from "./Dataset.js"
import { type DatasetFilter, DatasetsRepo } from "./DatasetsRepo.js"
import { inTransaction } from "../db/Transaction.js"

const RESOURCE = "dataset"

/** Changing any of these changes the data itself: the version goes up by one. */
const CONTENT = ["uri", "path", "format", "sizeBytes", "rows"] as const
const METADATA = ["name", "description", "tags"] as const

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

const newDataset = (labId: LabId, input: Omit<CreateDataset, "labId">): Dataset => {
  const now = new Date()
  return {
    id: DatasetId.make(newId("ds")),
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
}

/** The dataset with the patch applied, and the fields that changed; a change of content raises the version. */
const patched = (current: Dataset, patch: Omit<UpdateDataset, "labId">) => {
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
  const dataset: Dataset = { ...next, version: current.version + (content.length > 0 ? 1 : 0), updatedAt: new Date() }
  return { dataset, changed }
}

/** A taken name is 409; any other database error is a defect. */
const nameTaken = (dataset: Dataset) => (error: unknown) =>
  isUniqueViolation(error)
    ? Effect.fail(new StateConflict({ resource: RESOURCE, id: dataset.id, problem: `a dataset named ${dataset.name} exists in this lab` }))
    : Effect.die(error)

export class Datasets extends Effect.Service<Datasets>()("Datasets", {
  dependencies: [DatasetsRepo.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const { sql, repo, activity } = yield* Effect.all(resourceDeps(DatasetsRepo))

    const note = (dataset: Dataset, kind: string, actor: string, message: string, data: Record<string, unknown> = {}) =>
      activity.record({ labId: dataset.labId, kind, ref: dataset.id, actor, message, data: { version: dataset.version, ...data } })

    const get = (labId: LabId, id: DatasetId) => orNotFound(RESOURCE, id)(repo.find(labId, id))
    const locked = (labId: LabId, id: DatasetId) => orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))

    const create = (labId: LabId, input: Omit<CreateDataset, "labId">, actor: string) => {
      const dataset = newDataset(labId, input)
      return inTransaction(sql)(
        Effect.gen(function* () {
          yield* Effect.catchAll(repo.insert(dataset), nameTaken(dataset))
          yield* note(dataset, "dataset.created", actor, `Dataset “${dataset.name}” created`, { format: dataset.format })
          return dataset
        })
      )
    }

    const update = (labId: LabId, id: DatasetId, patch: Omit<UpdateDataset, "labId">, actor: string) =>
      inTransaction(sql)(
        Effect.gen(function* () {
          const current = yield* locked(labId, id)
          const { dataset, changed } = patched(current, patch)
          if (changed.length === 0) return current
          yield* Effect.catchAll(repo.update(dataset), nameTaken(dataset))
          yield* note(dataset, "dataset.updated", actor, `Dataset “${dataset.name}” updated (${changed.join(", ")})`, { changed })
          return dataset
        })
      )

    const remove = (labId: LabId, id: DatasetId, actor: string) =>
      inTransaction(sql)(
        Effect.gen(function* () {
          const current = yield* orNotFound(RESOURCE, id)(repo.remove(labId, id))
          yield* note(current, "dataset.deleted", actor, `Dataset “${current.name}” deleted`)
          return current
        })
      )

    return { list: (labId: LabId, filter: DatasetFilter) => repo.list(labId, filter), get, create, update, remove }
  })
}) {}
