import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Envelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { LabQuery, labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { AddProjectItem, CreateProject, Project, ProjectDetail, ProjectId, ProjectItem, ProjectQuery, UpdateProject } from "./Project.js"

const Id = Schema.String.pipe(Schema.maxLength(64))
const ProjectPath = Schema.Struct({ id: ProjectId })

/** GET and POST /projects are catalog routes; the rest are extensions. */
export class ProjectsApi extends labResource("projects", {
  path: "/projects",
  params: ProjectPath,
  query: paged(ProjectQuery.fields),
  item: Project,
  detail: ProjectDetail,
  create: CreateProject,
  update: UpdateProject,
  summaries: {
    list: "Projects, newest first, filtered by status, a grouped item and time",
    create: "Create a project (it starts active)",
    get: "One project with its items (extension)",
    update: "Change a project or move it through its lifecycle (extension)",
    delete: "Delete a project and its membership list; the items themselves stay (extension)"
  }
})
  .add(
    HttpApiEndpoint.post("addItem", "/projects/:id/items")
      .setPath(ProjectPath)
      .setPayload(AddProjectItem)
      .addSuccess(Envelope(ProjectItem), { status: 201 })
      .annotate(OpenApi.Summary, "Group an experiment, paper or task in the project (extension)")
  )
  .add(
    HttpApiEndpoint.del("removeItem", "/projects/:id/items/:itemId")
      .setPath(Schema.Struct({ id: ProjectId, itemId: Id }))
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(ProjectItem))
      .annotate(OpenApi.Summary, "Take an item out of the project (extension)")
  )
  .pipe(labGroup)
  .addError(ConflictWire) {}
