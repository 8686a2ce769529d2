import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Agents } from "./Agents.js"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.map(Effect.all([LabRequests, Agents]), ([lab, agents]) =>
    labRoutes(handlers, lab, {
      ...agents,
      list: (labId, { status, ...page }) => agents.list(labId, { ...page, status: Option.fromNullable(status) })
    })
  )
)
