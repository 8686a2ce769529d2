import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Datasets } from "./Datasets.js"

export const DatasetsHttp = HttpApiBuilder.group(Api, "datasets", (handlers) =>
  Effect.map(Effect.all([LabRequests, Datasets]), ([lab, datasets]) => labRoutes(handlers, lab, datasets))
)
