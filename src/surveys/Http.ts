import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Surveys } from "./Surveys.js"

export const SurveysHttp = HttpApiBuilder.group(Api, "surveys", (handlers) =>
  Effect.map(Effect.all([LabRequests, Surveys]), ([lab, surveys]) => labRoutes(handlers, lab, surveys))
)
