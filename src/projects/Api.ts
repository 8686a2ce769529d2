import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { AddProjectItem, CreateProject, Project, ProjectDetail, ProjectId, ProjectItem, ProjectQuery, UpdateProject } from "./Project.js"

const Id = Schema.String.pipe(Schema.maxLength(64))
const ProjectPath = Schema.Struct({ id: ProjectId })
const LabQuery = Schema.Struct({ labId: LabRef })

/** GET and POST /projects are catalog routes; the rest are extensions. */
export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(
    HttpApiEndpoint.get("list", "/projects")
      .setUrlParams(Schema.Struct({ ...ProjectQuery.fields, ...PageParams }))
      .addSuccess(ListEnvelope(Project))
      .annotate(OpenApi.Summary, "Projects, newest first, filtered by status, a grouped item and time")
  )
  .add(
    HttpApiEndpoint.post("create", "/projects")
      .setPayload(CreateProject)
      .addSuccess(Envelope(ProjectDetail), { status: 201 })
      .annotate(OpenApi.Summary, "Create a project (it starts active)")
  )
  .add(
    HttpApiEndpoint.get("get", "/projects/:id")
      .setPath(ProjectPath)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(ProjectDetail))
      .annotate(OpenApi.Summary, "One project with its items (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/projects/:id")
      .setPath(ProjectPath)
      .setPayload(UpdateProject)
      .addSuccess(Envelope(ProjectDetail))
      .annotate(OpenApi.Summary, "Change a project or move it through its lifecycle (extension)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/projects/:id")
      .setPath(ProjectPath)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(ProjectDetail))
      .annotate(OpenApi.Summary, "Delete a project and its membership list; the items themselves stay (extension)")
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
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(ConflictWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
