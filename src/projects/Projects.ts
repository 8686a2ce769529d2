import { Effect, Option } from "effect"
import { ActivityRepo } from "../activity/ActivityRepo.js"
import { resourceDeps, type ResourceDeps } from "../activity/ResourceService.js"
import { applyPatch, type LifecycleLog, storeChange } from "../activity/Changes.js"
import { NotFoundInLab, orNotFound, StateConflict } from "../common/DomainErrors.js"
import { newId } from "../common/Ids.js"
import { transition } from "../common/StateMachine.js"
import { isUniqueViolation } from "../db/SqlErrors.js"
import type { LabId } from "../labs/LabId.js"
import {
  type AddProjectItem,
  type CreateProject,
  MAX_ITEMS,
  OPEN,
  type Project,
  type ProjectDetail,
  ProjectId,
  type ProjectItem,
  ProjectLifecycle,
  type ProjectStatus,
  type UpdateProject
} from "./Project.js"
import { type ProjectFilter, ProjectsRepo } from "./ProjectsRepo.js"
import { References } from "../common/References.js"
import { inTransaction } from "../db/Transaction.js"

/** How status changes are logged. */
const LOG: LifecycleLog<ProjectStatus> = {
  kind: "project",
  label: "Project",
  verbs: { active: "resumed", paused: "paused", completed: "completed", archived: "archived" }
}

const FIELDS = ["name", "description", "status"] as const

const RESOURCE = "project"

interface Deps extends ResourceDeps<ProjectsRepo> {
  readonly references: References
}

const conflict = (id: string, problem: string) => new StateConflict({ resource: RESOURCE, id, problem })

const detail = (repo: ProjectsRepo, project: Project) =>
  Effect.map(repo.items(project.id), (items): ProjectDetail => ({ ...project, itemCount: items.length, items }))

const nameTaken = (repo: ProjectsRepo, labId: LabId, name: string, self?: string) =>
  Effect.flatMap(repo.findByName(labId, name), (taken) =>
    Option.isSome(taken) && taken.value.id !== self
      ? Effect.fail(conflict(taken.value.id, `the lab has a project named ${taken.value.name} already: ${taken.value.id}`))
      : Effect.void
  )

const uniqueName = (name: string) => (error: unknown) =>
  isUniqueViolation(error) ? Effect.fail(conflict(name, `the lab has a project named ${name} already`)) : Effect.die(error)

const create = ({ sql, repo, activity }: Deps, labId: LabId, input: Omit<CreateProject, "labId">, actor: string) =>
  Effect.gen(function* () {
    yield* nameTaken(repo, labId, input.name)
    const now = new Date()
    const id = ProjectId.make(newId("prj"))
    const project: Project = { id, labId, ...input, status: "active", itemCount: 0, createdAt: now, updatedAt: now }
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
  }).pipe(inTransaction(sql))

/** The project as the patch leaves it, once its lifecycle and the name allow it. */
const patched = (repo: ProjectsRepo, labId: LabId, current: Project, patch: Omit<UpdateProject, "labId">) =>
  Effect.gen(function* () {
    const id = current.id
    if (current.status === "archived") return yield* conflict(id, `project ${id} is archived, a final state: it cannot be changed`)
    const status = patch.status ?? current.status
    if (status !== current.status) yield* transition(`project ${id}`, ProjectLifecycle, current.status, status)
    if (patch.name !== undefined) yield* nameTaken(repo, labId, patch.name, id)
    const next: Project = { ...applyPatch(current, patch, ["name", "description"]), status }
    return next
  })

const update = ({ sql, repo, activity }: Deps, labId: LabId, id: ProjectId, patch: Omit<UpdateProject, "labId">, actor: string) =>
  Effect.gen(function* () {
    const current = yield* orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))
    const next = yield* patched(repo, labId, current, patch)
    const updated = yield* storeChange(
      {
        activity,
        target: { labId, id, actor },
        log: LOG,
        fields: FIELDS,
        name: (p) => p.name,
        store: (p) => Effect.catchAll(repo.update(p), uniqueName(p.name))
      },
      current,
      next
    )
    return yield* detail(repo, updated)
  }).pipe(inTransaction(sql))

const remove = ({ sql, repo, activity }: Deps, labId: LabId, id: ProjectId, actor: string) =>
  Effect.gen(function* () {
    const current = yield* orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id))
    const deleted = yield* detail(repo, current)
    yield* repo.remove(labId, id)
    yield* activity.record({
      labId,
      kind: "project.deleted",
      ref: id,
      actor,
      message: `Deleted project ${deleted.name}`,
      data: { name: deleted.name, status: deleted.status, items: deleted.items.length }
    })
    return deleted
  }).pipe(inTransaction(sql))

/** The project, locked, if items may be added or removed: 409 once it is completed or archived. */
const openProject = (repo: ProjectsRepo, labId: LabId, id: ProjectId) =>
  Effect.flatMap(orNotFound(RESOURCE, id)(repo.findForUpdate(labId, id)), (project) =>
    OPEN.includes(project.status)
      ? Effect.succeed(project)
      : Effect.fail(conflict(id, `project ${id} is ${project.status}: its items can no longer change`))
  )

/** An item went into or out of the project: the project is touched and the move logged. */
const itemMoved = (
  { repo, activity }: Deps,
  labId: LabId,
  project: Project,
  item: ProjectItem,
  actor: string,
  move: "added" | "removed",
  now: Date
) =>
  Effect.gen(function* () {
    yield* repo.touch(project.id, now)
    yield* activity.record({
      labId,
      kind: `project.item_${move}`,
      ref: project.id,
      actor,
      message: move === "added"
        ? `Added ${item.kind} ${item.ref} to project ${project.name}`
        : `Removed ${item.kind} ${item.ref} from project ${project.name}`,
      data: { itemId: item.id, kind: item.kind, itemRef: item.ref }
    })
    return item
  })

const addItem = (deps: Deps, labId: LabId, projectId: ProjectId, input: Omit<AddProjectItem, "labId">, actor: string) =>
  Effect.gen(function* () {
    const { repo } = deps
    const project = yield* openProject(repo, labId, projectId)
    yield* deps.references.require(labId, "ref", input.kind, [input.ref])
    const existing = yield* repo.findItem(projectId, input.kind, input.ref)
    const duplicate = (itemId?: string) =>
      conflict(projectId, `${input.kind} ${input.ref} is in project ${projectId} already${itemId ? ` as item ${itemId}` : ""}`)
    if (Option.isSome(existing)) return yield* duplicate(existing.value.id)
    if (project.itemCount >= MAX_ITEMS) {
      return yield* conflict(projectId, `project ${projectId} has ${MAX_ITEMS} items, the most a project holds`)
    }
    const now = new Date()
    const item: ProjectItem = { id: newId("pit"), projectId, labId, kind: input.kind, ref: input.ref, createdAt: now }
    yield* Effect.catchAll(repo.insertItem(item), (e) => (isUniqueViolation(e) ? Effect.fail(duplicate()) : Effect.die(e)))
    return yield* itemMoved(deps, labId, project, item, actor, "added", now)
  }).pipe(inTransaction(deps.sql))

const removeItem = (deps: Deps, labId: LabId, projectId: ProjectId, itemId: string, actor: string) =>
  Effect.gen(function* () {
    const { repo } = deps
    const project = yield* openProject(repo, labId, projectId)
    const item = yield* Effect.flatMap(
      repo.deleteItem(projectId, itemId),
      Option.match({
        onNone: () => Effect.fail(new NotFoundInLab({ resource: `project ${projectId} item`, id: itemId })),
        onSome: Effect.succeed
      })
    )
    return yield* itemMoved(deps, labId, project, item, actor, "removed", new Date())
  }).pipe(inTransaction(deps.sql))

/** Projects group the lab's experiments, papers and tasks: active ⇄ paused → completed → archived (final). */
export class Projects extends Effect.Service<Projects>()("Projects", {
  dependencies: [ProjectsRepo.Default, References.Default, ActivityRepo.Default],
  effect: Effect.gen(function* () {
    const deps: Deps = yield* Effect.all({ ...resourceDeps(ProjectsRepo), references: References })
    const { repo } = deps
    return {
      list: (labId: LabId, filter: ProjectFilter) => repo.list(labId, filter),
      get: (labId: LabId, id: ProjectId) =>
        Effect.flatMap(orNotFound(RESOURCE, id)(repo.find(labId, id)), (project) => detail(repo, project)),
      create: (labId: LabId, input: Omit<CreateProject, "labId">, actor: string) => create(deps, labId, input, actor),
      update: (labId: LabId, id: ProjectId, patch: Omit<UpdateProject, "labId">, actor: string) =>
        update(deps, labId, id, patch, actor),
      remove: (labId: LabId, id: ProjectId, actor: string) => remove(deps, labId, id, actor),
      addItem: (labId: LabId, projectId: ProjectId, input: Omit<AddProjectItem, "labId">, actor: string) =>
        addItem(deps, labId, projectId, input, actor),
      removeItem: (labId: LabId, projectId: ProjectId, itemId: string, actor: string) =>
        removeItem(deps, labId, projectId, itemId, actor)
    }
  })
}) {}
