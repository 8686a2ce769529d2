import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { created, fetched, listed, removed } from "../http/LabHandlers.js"
import { LabRequests } from "../http/LabRequests.js"
import { Memories } from "./Memories.js"

export const MemoryHttp = HttpApiBuilder.group(Api, "memory", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const memories = yield* Memories
    return handlers
      .handle("list", ({ urlParams }) => listed(lab, urlParams, memories.list))
      .handle("create", ({ payload }) => created(lab, payload, memories.create))
      .handle("get", ({ path, urlParams }) => fetched(lab, urlParams.labId, path.id, memories.get))
      .handle("delete", ({ path, urlParams }) => removed(lab, urlParams.labId, path.id, memories.remove))
  })
)
