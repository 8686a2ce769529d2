import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ForbiddenWire, NotFoundWire, NotImplementedWire } from "../http/Errors.js"
import { PageParams } from "../http/Pagination.js"

/**
 * Catalog routes whose behaviour lands in later issues. They are declared with
 * their auth and lab-scope rules: the scope is checked, then 501.
 */
const LabQuery = Schema.Struct({ labId: LabRef, ...PageParams })
const LabBody = Schema.Struct({ labId: LabRef })

const list = <N extends string>(name: N, path: `/${string}`) =>
  HttpApiEndpoint.get(name, path).setUrlParams(LabQuery).addSuccess(ListEnvelope(Schema.Unknown))
const read = <N extends string>(name: N, path: `/${string}`) =>
  HttpApiEndpoint.get(name, path).setUrlParams(LabQuery).addSuccess(Envelope(Schema.Unknown))
const create = <N extends string>(name: N, path: `/${string}`) =>
  HttpApiEndpoint.post(name, path).setPayload(LabBody).addSuccess(Envelope(Schema.Unknown), { status: 201 })
const action = <N extends string>(name: N, path: `/${string}`, param: string) =>
  HttpApiEndpoint.post(name, path)
    .setPath(Schema.Struct({ [param]: Schema.String }))
    .setPayload(LabBody)
    .addSuccess(Envelope(Schema.Unknown), { status: 202 })


export class PlannedApi extends HttpApiGroup.make("planned")
  .add(list("agents", "/agents"))
  .add(list("listBackups", "/backups"))
  .add(create("createBackup", "/backups"))
  .add(action("promoteChat", "/chats/:id/promote", "id"))
  .add(list("listContributions", "/contributions"))
  .add(create("createContribution", "/contributions"))
  .add(read("costs", "/costs"))
  .add(list("listDatasets", "/datasets"))
  .add(create("createDataset", "/datasets"))
  .add(list("listExperiments", "/experiments"))
  .add(create("createExperiment", "/experiments"))
  .add(list("listExperimentCosts", "/experiments/costs"))
  .add(create("createExperimentCost", "/experiments/costs"))
  .add(list("listQueues", "/experiments/queues"))
  .add(create("enqueue", "/experiments/queues"))
  .add(list("listTemplates", "/experiments/templates"))
  .add(create("createTemplate", "/experiments/templates"))
  .add(list("figures", "/figures"))
  .add(list("listKnowledge", "/knowledge"))
  .add(create("createKnowledge", "/knowledge"))
  .add(list("listMemory", "/memory"))
  .add(create("createMemory", "/memory"))
  .add(list("listPapers", "/papers"))
  .add(create("createPaper", "/papers"))
  .add(action("publishLoop", "/papers/:id/publish-loop", "id"))
  .add(list("pods", "/pods"))
  .add(action("startPod", "/pods/:podId/start", "podId"))
  .add(action("stopPod", "/pods/:podId/stop", "podId"))
  .add(list("listProjects", "/projects"))
  .add(create("createProject", "/projects"))
  .add(list("search", "/search"))
  .add(list("listStandups", "/standups"))
  .add(create("createStandup", "/standups"))
  .add(list("listSurveys", "/surveys"))
  .add(create("createSurvey", "/surveys"))
  .add(list("listTelemetry", "/telemetry"))
  .add(create("ingestTelemetry", "/telemetry"))
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .addError(NotImplementedWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
