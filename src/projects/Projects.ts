import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import { Conflict, NotFound } from "../http/Errors.js"
import {
  type AddProjectItem,
  type CreateProject,
  MAX_ITEMS,
  OPEN,
  type Project,
  type ProjectDetail,
  type ProjectItem,
  ProjectLifecycle,
  type ProjectStatus,
  type UpdateProject
} from "./Project.js"
import { type ProjectFilter, ProjectsRepo } from "./ProjectsRepo.js"
import { References } from "../common/References.js"

/** The activity kind of a status change. */
const VERB: Record<ProjectStatus, string> = { active: "resumed", paused: "paused", completed: "completed", archived: "archived" }

const FIELDS = ["name", "description", "status"] as const

/** Projects group the lab's experiments, papers and tasks: active ⇄ paused → completed → archived (final). */
export class Projects extends Effect.Service<Projects>()("Projects", {
  dependencies: [ProjectsRepo.Default, References.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ProjectsRepo
    const references = yield* References
    const activity = yield* ActivityRepo

    const notFound = (id: string) => new NotFound({ message: `no project ${id} in this lab` })
    const found = (id: string) =>
      (o: Option.Option<Project>): Effect.Effect<Project, NotFound> => (Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(notFound(id)))

    const detail = (project: Project) =>
      Effect.map(repo.items(project.id), (items): ProjectDetail => ({ ...project, itemCount: items.length, items }))

    const get = (labId: string, id: string) => Effect.flatMap(Effect.flatMap(repo.find(labId, id), found(id)), detail)

    const nameTaken = (labId: string, name: string, self?: string) =>
      Effect.flatMap(repo.findByName(labId, name), (taken) =>
        Option.isSome(taken) && taken.value.id !== self
          ? Effect.fail(new Conflict({ message: `the lab has a project named ${taken.value.name} already: ${taken.value.id}` }))
          : Effect.void
      )

    const uniqueName = (name: string) => (error: unknown) =>
      isUniqueViolation(error)
        ? Effect.fail(new Conflict({ message: `the lab has a project named ${name} already` }))
        : Effect.die(error)

    const create = (labId: string, input: Omit<CreateProject, "labId">, actor: string) =>
      Effect.gen(function* () {
        yield* nameTaken(labId, input.name)
        const now = new Date()
        const project: Project = { id: newId("prj"), labId, ...input, status: "active", itemCount: 0, createdAt: now, updatedAt: now }
        yield* Effect.catchAll(repo.insert(project), uniqueName(input.name))
        yield* activity.record({
          labId,
          kind: "project.created",
          ref: project.id,
          actor,
          message: `Created project ${project.name}`,
          data: { name: project.name }
        })
        const created: ProjectDetail = { ...project, items: [] }
        return created
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const update = (labId: string, id: string, patch: Omit<UpdateProject, "labId">, actor: string) =>
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), found(id))
        if (current.status === "archived") {
          return yield* new Conflict({ message: `project ${id} is archived, a final state: it cannot be changed` })
        }
        const status = patch.status ?? current.status
        if (status !== current.status) yield* transition(`project ${id}`, ProjectLifecycle, current.status, status)
        if (patch.name !== undefined) yield* nameTaken(labId, patch.name, id)
        const next: Project = {
          ...current,
          name: patch.name ?? current.name,
          description: patch.description ?? current.description,
          status
        }
        const changed = FIELDS.filter((f) => next[f] !== current[f])
        if (changed.length === 0) return yield* detail(current)
        const updated: Project = { ...next, updatedAt: new Date() }
        yield* Effect.catchAll(repo.update(updated), uniqueName(updated.name))
        const moved = status !== current.status
        yield* activity.record({
          labId,
          kind: moved ? `project.${VERB[status]}` : "project.updated",
          ref: id,
          actor,
          message: moved ? `Project ${updated.name}: ${current.status} → ${status}` : `Updated project ${updated.name} (${changed.join(", ")})`,
          data: { changed, ...(moved ? { from: current.status, to: status } : {}) }
        })
        return yield* detail(updated)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const remove = (labId: string, id: string, actor: string) =>
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(repo.findForUpdate(labId, id), found(id))
        const deleted = yield* detail(current)
        yield* repo.delete(labId, id)
        yield* activity.record({
          labId,
          kind: "project.deleted",
          ref: id,
          actor,
          message: `Deleted project ${deleted.name}`,
          data: { name: deleted.name, status: deleted.status, items: deleted.items.length }
        })
        return deleted
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /** The project, locked, if items may be added or removed: 409 once it is completed or archived. */
    const openProject = (labId: string, id: string) =>
      Effect.flatMap(Effect.flatMap(repo.findForUpdate(labId, id), found(id)), (project) =>
        OPEN.includes(project.status)
          ? Effect.succeed(project)
          : Effect.fail(new Conflict({ message: `project ${id} is ${project.status}: its items can no longer change` }))
      )

    const addItem = (labId: string, projectId: string, input: Omit<AddProjectItem, "labId">, actor: string) =>
      Effect.gen(function* () {
        const project = yield* openProject(labId, projectId)
        yield* references.require(labId, "ref", input.kind, [input.ref])
        const existing = yield* repo.findItem(projectId, input.kind, input.ref)
        const duplicate = (itemId?: string) =>
          new Conflict({
            message: `${input.kind} ${input.ref} is in project ${projectId} already${itemId ? ` as item ${itemId}` : ""}`
          })
        if (Option.isSome(existing)) return yield* duplicate(existing.value.id)
        if (project.itemCount >= MAX_ITEMS) {
          return yield* new Conflict({ message: `project ${projectId} has ${MAX_ITEMS} items, the most a project holds` })
        }
        const now = new Date()
        const item: ProjectItem = { id: newId("pit"), projectId, labId, kind: input.kind, ref: input.ref, createdAt: now }
        yield* Effect.catchAll(repo.insertItem(item), (e) => (isUniqueViolation(e) ? Effect.fail(duplicate()) : Effect.die(e)))
        yield* repo.touch(projectId, now)
        yield* activity.record({
          labId,
          kind: "project.item_added",
          ref: projectId,
          actor,
          message: `Added ${input.kind} ${input.ref} to project ${project.name}`,
          data: { itemId: item.id, kind: item.kind, itemRef: item.ref }
        })
        return item
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const removeItem = (labId: string, projectId: string, itemId: string, actor: string) =>
      Effect.gen(function* () {
        const project = yield* openProject(labId, projectId)
        const item = yield* Effect.flatMap(
          repo.deleteItem(projectId, itemId),
          Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `project ${projectId} has no item ${itemId}` })),
            onSome: Effect.succeed
          })
        )
        yield* repo.touch(projectId, new Date())
        yield* activity.record({
          labId,
          kind: "project.item_removed",
          ref: projectId,
          actor,
          message: `Removed ${item.kind} ${item.ref} from project ${project.name}`,
          data: { itemId: item.id, kind: item.kind, itemRef: item.ref }
        })
        return item
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { list: (labId: string, filter: ProjectFilter) => repo.list(labId, filter), get, create, update, remove, addItem, removeItem }
  })
}) {}
