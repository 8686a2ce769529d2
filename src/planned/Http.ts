import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { NotImplemented } from "../http/Errors.js"
import { Labs } from "../labs/Labs.js"

const notYet = new NotImplemented({ message: "this route is declared but not implemented yet" })

export const PlannedHttp = HttpApiBuilder.group(Api, "planned", (handlers) =>
  Effect.gen(function* () {
    const labs = yield* Labs
    const read = ({ urlParams }: { readonly urlParams: { readonly labId: string } }) =>
      Effect.zipRight(labs.access(urlParams.labId, "read"), Effect.fail(notYet))
    const write = ({ payload }: { readonly payload: { readonly labId: string } }) =>
      Effect.zipRight(labs.access(payload.labId, "write"), Effect.fail(notYet))
    return handlers
      .handle("agents", read)
      .handle("listBackups", read)
      .handle("createBackup", write)
      .handle("promoteChat", write)
      .handle("listContributions", read)
      .handle("createContribution", write)
      .handle("costs", read)
      .handle("listDatasets", read)
      .handle("createDataset", write)
      .handle("listExperiments", read)
      .handle("createExperiment", write)
      .handle("listExperimentCosts", read)
      .handle("createExperimentCost", write)
      .handle("listQueues", read)
      .handle("enqueue", write)
      .handle("listTemplates", read)
      .handle("createTemplate", write)
      .handle("figures", read)
      .handle("listKnowledge", read)
      .handle("createKnowledge", write)
      .handle("listMemory", read)
      .handle("createMemory", write)
      .handle("listPapers", read)
      .handle("createPaper", write)
      .handle("publishLoop", write)
      .handle("pods", read)
      .handle("startPod", write)
      .handle("stopPod", write)
      .handle("listProjects", read)
      .handle("createProject", write)
      .handle("search", read)
      .handle("listStandups", read)
      .handle("createStandup", write)
      .handle("listSurveys", read)
      .handle("createSurvey", write)
      .handle("listTelemetry", read)
      .handle("ingestTelemetry", write)
  })
)
