import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { KeysApi, MeApi } from "./auth/Api.js"
import {
  InsufficientStorageWire,
  MethodNotAllowedWire,
  PayloadTooLargeWire,
  QuotaExceededWire,
  RateLimitedWire,
  ServerErrorWire,
  ServiceUnavailableWire,
  UnsupportedMediaTypeWire,
  ValidationErrorWire
} from "./http/Errors.js"
import { declareIdempotencyKey } from "./http/IdempotencyDocument.js"
import { LabsApi } from "./labs/Api.js"
import { ActivityApi } from "./activity/Api.js"
import { FilesApi } from "./files/Api.js"
import { SyncApi, WebhooksApi } from "./sync/Api.js"
import { HealthApi, StatusApi } from "./status/Api.js"
import { MetricsApi } from "./observability/Api.js"
import { TasksApi } from "./tasks/Api.js"
import { TelemetryApi } from "./telemetry/Api.js"
import { ContributionsApi } from "./contributions/Api.js"
import { BackupsApi } from "./backups/Api.js"
import { SearchApi } from "./search/Api.js"
import { PapersApi } from "./papers/Api.js"
import { DatasetsApi } from "./datasets/Api.js"
import { FiguresApi } from "./figures/Api.js"
import { AgentsApi } from "./agents/Api.js"
import { MemoryApi } from "./memory/Api.js"
import { KnowledgeApi } from "./knowledge/Api.js"
import { SurveysApi } from "./surveys/Api.js"
import { StandupsApi } from "./standups/Api.js"
import { ProjectsApi } from "./projects/Api.js"
import { ChatsApi } from "./chats/Api.js"
import { ExperimentsApi } from "./experiments/Api.js"
import { PodsApi } from "./pods/Api.js"
import { CostsApi } from "./costs/Api.js"

export const VERSION = "0.1.0"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/**
 * HttpApi reports request-decoding failures as 400 HttpApiDecodeError; this
 * service answers them as 422 validation_error (src/http/steps/ErrorEnvelope.ts), so the
 * document drops the 400 entries and their schemas.
 */
const dropDecodeError = (spec: Record<string, unknown>): Record<string, unknown> => {
  if (isRecord(spec["paths"])) {
    for (const item of Object.values(spec["paths"])) {
      if (!isRecord(item)) continue
      for (const operation of Object.values(item)) {
        if (isRecord(operation) && isRecord(operation["responses"])) delete operation["responses"]["400"]
      }
    }
  }
  const components = spec["components"]
  if (isRecord(components) && isRecord(components["schemas"])) {
    delete components["schemas"]["HttpApiDecodeError"]
    delete components["schemas"]["Issue"]
    delete components["schemas"]["PropertyKey"]
  }
  return spec
}

/** The whole contract: every route of spec 4.2, the webhook receiver, and the extensions. */
export class Api extends HttpApi.make("lab-service")
  .add(StatusApi)
  .add(HealthApi)
  .add(MetricsApi)
  .add(MeApi)
  .add(LabsApi)
  .add(KeysApi)
  .add(TasksApi)
  .add(FilesApi)
  .add(SyncApi)
  .add(ActivityApi)
  .add(AgentsApi)
  .add(MemoryApi)
  .add(KnowledgeApi)
  .add(SurveysApi)
  .add(StandupsApi)
  .add(ProjectsApi)
  .add(ChatsApi)
  .add(PapersApi)
  .add(DatasetsApi)
  .add(FiguresApi)
  .add(TelemetryApi)
  .add(ContributionsApi)
  .add(BackupsApi)
  .add(SearchApi)
  .add(ExperimentsApi)
  .add(PodsApi)
  .add(CostsApi)
  .add(WebhooksApi)
  .addError(ValidationErrorWire)
  // a known path asked with another method (the Allow header lists the ones it takes)
  .addError(MethodNotAllowedWire)
  .addError(PayloadTooLargeWire)
  .addError(UnsupportedMediaTypeWire)
  .addError(RateLimitedWire)
  // any write may take its lab over the records quota (src/quotas/RecordsQuota.ts)
  .addError(QuotaExceededWire)
  .addError(ServerErrorWire)
  .addError(ServiceUnavailableWire)
  // any write, while the disk is below its reserve (src/status/DiskSpace.ts)
  .addError(InsufficientStorageWire)
  .annotate(OpenApi.Title, "Lab Service")
  .annotate(OpenApi.Version, VERSION)
  .annotate(
    OpenApi.Description,
    "REST API for research labs. Every success is {data, meta}; every failure is {error:{code,message,status}}. " +
      "Every path is also served under /v1 as an alias of /api/v1."
  )
  // relative: the origin the document was fetched from, so the docs page and a client reading the document online
  // reach the server that served it; src/http/Docs.ts names PUBLIC_BASE_URL instead when it is configured
  .annotate(OpenApi.Servers, [{ url: "/", description: "the server this document is served by" }])
  .annotate(OpenApi.Transform, (spec) => declareIdempotencyKey(dropDecodeError(spec))) {}
