import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, updated } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Agents } from "./Agents.js"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const agents = yield* Agents
    return handlers
      .handle("list", ({ urlParams }) =>
        listed(lab, urlParams, (labId, { status, ...page }) => agents.list(labId, { ...page, status: Option.fromNullable(status) }))
      )
      .handle("create", ({ payload }) => created(lab, payload, agents.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, agents.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, agents.update))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, agents.remove))
  })
)
