import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Standups } from "./Standups.js"

export const StandupsHttp = HttpApiBuilder.group(Api, "standups", (handlers) =>
  Effect.map(Effect.all([LabRequests, Standups]), ([lab, standups]) => labRoutes(handlers, lab, standups))
)
