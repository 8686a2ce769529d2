import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { requireAdmin } from "../http/Authentication.js"
import { Scrape } from "./Scrape.js"

export const MetricsHttp = HttpApiBuilder.group(Api, "metrics", (handlers) =>
  Effect.map(Scrape, (scrape) => handlers.handle("metrics", () => Effect.zipRight(requireAdmin, scrape.text)))
)
