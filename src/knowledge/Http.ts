import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed, updated } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { KnowledgeBase } from "./KnowledgeBase.js"

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const knowledge = yield* KnowledgeBase
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, knowledge.list))
      .handle("create", ({ payload }) => created(lab, payload, knowledge.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, knowledge.get))
      .handle("update", ({ path, payload }) => updated(lab, path.id, payload, knowledge.update))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, knowledge.remove))
  })
)
