import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Envelope } from "../http/Envelope.js"
import { ConflictWire } from "../http/Errors.js"
import { createIn, deleteById, getById, LabQuery, labGroup, listOf, paged, updateById } from "../http/LabEndpoints.js"
import { AddProjectItem, CreateProject, Project, ProjectDetail, ProjectId, ProjectItem, ProjectQuery, UpdateProject } from "./Project.js"

const Id = Schema.String.pipe(Schema.maxLength(64))
const ProjectPath = Schema.Struct({ id: ProjectId })

/** GET and POST /projects are catalog routes; the rest are extensions. */
export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    listOf("/projects", paged(ProjectQuery.fields), Project).annotate(
      OpenApi.Summary,
      "Projects, newest first, filtered by status, a grouped item and time"
    )
  )
  .add(createIn("/projects", CreateProject, ProjectDetail).annotate(OpenApi.Summary, "Create a project (it starts active)"))
  .add(getById("/projects/:id", ProjectPath, ProjectDetail).annotate(OpenApi.Summary, "One project with its items (extension)"))
  .add(
    updateById("/projects/:id", ProjectPath, UpdateProject, ProjectDetail).annotate(
      OpenApi.Summary,
      "Change a project or move it through its lifecycle (extension)"
    )
  )
  .add(
    deleteById("/projects/:id", ProjectPath, ProjectDetail).annotate(
      OpenApi.Summary,
      "Delete a project and its membership list; the items themselves stay (extension)"
    )
  )
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
