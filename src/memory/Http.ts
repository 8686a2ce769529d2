import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Memories } from "./Memories.js"

export const MemoryHttp = HttpApiBuilder.group(Api, "memory", (handlers) =>
  Effect.map(Effect.all([LabRequests, Memories]), ([lab, memories]) => labRoutes(handlers, lab, memories))
)
