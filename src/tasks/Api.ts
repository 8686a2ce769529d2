import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"
import { CreateTask, Task, TaskId, TaskStatus } from "./Task.js"

export class TasksApi extends HttpApiGroup.make("tasks")
  .add(
    HttpApiEndpoint.get("list", "/tasks")
      .setUrlParams(Schema.Struct({ labId: LabRef, status: Schema.optional(TaskStatus), ...PageParams }))
      .addSuccess(ListEnvelope(Task))
  )
  .add(HttpApiEndpoint.post("create", "/tasks").setPayload(CreateTask).addSuccess(Envelope(Task), { status: 201 }))
  .add(
    HttpApiEndpoint.del("delete", "/tasks/:taskId")
      .setPath(Schema.Struct({ taskId: TaskId }))
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(Envelope(Task))
      .addError(NotFoundWire)
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
