import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { LabRequests } from "../http/LabRequests.js"
import { labRoutes } from "../http/LabRoutes.js"
import { Figures } from "./Figures.js"

export const FiguresHttp = HttpApiBuilder.group(Api, "figures", (handlers) =>
  Effect.map(Effect.all([LabRequests, Figures]), ([lab, figures]) => labRoutes(handlers, lab, figures))
)
