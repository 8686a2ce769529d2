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
  docs: {
    list: {
      summary: "List projects",
      description: "The lab's projects, newest first, filtered by `status`, creation time, or `ref` to find the projects that group a given experiment, paper or task. Items are not included: get one project for them."
    },
    create: {
      summary: "Create a project",
      description: "Creates a project to group the lab's experiments, papers and tasks; it starts `active`. Add items with POST /api/v1/projects/{id}/items."
    },
    get: {
      summary: "Get a project with its items",
      description: "Extension. One project by id, with the experiments, papers and tasks it groups."
    },
    update: {
      summary: "Update a project or change its status",
      description: "Extension. Changes name or description, or moves the project active ⇄ paused → completed → archived (final, read-only). A move the lifecycle forbids, or a change to an archived project, is 409."
    },
    delete: {
      summary: "Delete a project",
      description: "Extension. Removes the project and its membership list; the experiments, papers and tasks it grouped stay."
    }
  }
})
  .add(
    HttpApiEndpoint.post("addItem", "/projects/:id/items")
      .setPath(ProjectPath)
      .setPayload(AddProjectItem)
      .addSuccess(Envelope(ProjectItem), { status: 201 })
      .annotateContext(
        OpenApi.annotations({
          summary: "Add an item to a project",
          description:
            "Extension. Groups an experiment, paper or task of the lab in the project, while it is active or paused. 409 when the project already holds that item, holds 500 items, or is completed or archived; 422 when `ref` names nothing of the lab."
        })
      )
  )
  .add(
    HttpApiEndpoint.del("removeItem", "/projects/:id/items/:itemId")
      .setPath(Schema.Struct({ id: ProjectId, itemId: Id }))
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(ProjectItem))
      .annotateContext(
        OpenApi.annotations({
          summary: "Remove an item from a project",
          description: "Extension. Takes the item out of the project (the experiment, paper or task itself stays), while the project is active or paused."
        })
      )
  )
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(OpenApi.Description, "Projects group the lab's experiments, papers and tasks: active ⇄ paused → completed → archived.") {}
