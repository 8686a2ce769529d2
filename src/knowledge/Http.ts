import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { KnowledgeBase } from "./KnowledgeBase.js"

export const KnowledgeHttp = HttpApiBuilder.group(Api, "knowledge", (handlers) =>
  Effect.map(Effect.all([LabRequests, KnowledgeBase]), ([lab, knowledge]) => labRoutes(handlers, lab, knowledge))
)
