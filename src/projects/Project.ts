import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Text, Timestamp } from "../common/Schemas.js"
import type { Transitions } from "../common/StateMachine.js"
import { RefKind } from "./References.js"

export const ProjectStatus = Schema.Literal("active", "paused", "completed", "archived").annotations({
  description: "active ⇄ paused, then completed, archived (final)"
})
export type ProjectStatus = typeof ProjectStatus.Type

export const ProjectLifecycle: Transitions<ProjectStatus> = {
  active: ["paused", "completed", "archived"],
  paused: ["active", "completed", "archived"],
  completed: ["archived"],
  archived: []
}

/** Items are added and removed while a project is active or paused. */
export const OPEN: ReadonlyArray<ProjectStatus> = ["active", "paused"]

export const MAX_ITEMS = 500

export const ProjectId = resourceId("ProjectId", "prj")
export type ProjectId = typeof ProjectId.Type

export const Project = LabResource(ProjectId, {
  name: Schema.String.annotations({ description: "unique in the lab (case-insensitive)" }),
  description: Schema.String,
  status: ProjectStatus,
  itemCount: Schema.Number.annotations({ description: "experiments, papers and tasks it groups" })
}).annotations({ identifier: "Project" })
export type Project = typeof Project.Type

export const ProjectItem = Schema.Struct({
  id: Schema.String.annotations({ description: "pit_…" }),
  projectId: Schema.String,
  labId: Schema.String,
  kind: RefKind,
  ref: Schema.String.annotations({ description: "the id of the experiment, paper or task" }),
  createdAt: Timestamp
}).annotations({ identifier: "ProjectItem" })
export type ProjectItem = typeof ProjectItem.Type

export const ProjectDetail = Schema.Struct({
  ...Project.fields,
  items: Schema.Array(ProjectItem).annotations({ description: `oldest first; at most ${MAX_ITEMS}` })
}).annotations({ identifier: "ProjectDetail" })
export type ProjectDetail = typeof ProjectDetail.Type

const ProjectName = Name(200)
const Description = Text(20_000)

export const CreateProject = Body({
  labId: LabRef,
  name: ProjectName,
  description: Schema.optionalWith(Description, { default: () => "" })
}).annotations({ identifier: "CreateProject", description: "a new project starts active" })
export type CreateProject = typeof CreateProject.Type

export const UpdateProject = Body({
  labId: LabRef,
  name: Schema.optional(ProjectName),
  description: Schema.optional(Description),
  status: Schema.optional(ProjectStatus).annotations({
    description: "a transition of the lifecycle (409 when not allowed); the same status again changes nothing"
  })
}).annotations({ identifier: "UpdateProject", description: "an archived project cannot be changed" })
export type UpdateProject = typeof UpdateProject.Type

export const AddProjectItem = Body({
  labId: LabRef,
  kind: RefKind,
  ref: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
    description: "an experiment, paper or task of the lab (422 when it is not, once that feature has its table)"
  })
}).annotations({ identifier: "AddProjectItem" })
export type AddProjectItem = typeof AddProjectItem.Type

export const ProjectQuery = Schema.Struct({
  labId: LabRef,
  status: Schema.optional(ProjectStatus),
  ref: Schema.optional(Schema.String.pipe(Schema.maxLength(64))).annotations({
    description: "only projects that group this experiment, paper or task"
  }),
  ...DateRange
})
