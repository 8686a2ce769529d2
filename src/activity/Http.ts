import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { ActivityRepo } from "./ActivityRepo.js"

export const ActivityHttp = HttpApiBuilder.group(Api, "activity", (handlers) =>
  Effect.map(Effect.all([LabRequests, ActivityRepo]), ([lab, activity]) => labRoutes(handlers, lab, activity))
)
