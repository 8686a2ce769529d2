import { HttpApi, OpenApi } from "@effect/platform"
import { KeysApi, MeApi } from "./auth/Api.js"
import {
  PayloadTooLargeWire,
  RateLimitedWire,
  ServerErrorWire,
  UnsupportedMediaTypeWire,
  ValidationErrorWire
} from "./http/Errors.js"
import { LabsApi } from "./labs/Api.js"
import { PlannedApi, WebhooksApi } from "./planned/Api.js"
import { StatusApi } from "./status/Api.js"
import { TasksApi } from "./tasks/Api.js"

export const VERSION = "0.1.0"

/**
 * HttpApi reports request-decoding failures as 400 HttpApiDecodeError; this
 * service answers them as 422 validation_error (see GlobalMiddleware), so the
 * document drops the 400 entries.
 */
const dropDecodeError = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = spec["paths"]
  if (typeof paths === "object" && paths !== null) {
    for (const item of Object.values(paths)) {
      for (const operation of Object.values(item as Record<string, unknown>)) {
        const responses = (operation as { responses?: Record<string, unknown> }).responses
        if (responses) delete responses["400"]
      }
    }
  }
  return spec
}

/** The whole contract: every route of spec 4.2, the webhook receiver, and the extensions. */
export class Api extends HttpApi.make("lab-service")
  .add(StatusApi)
  .add(MeApi)
  .add(LabsApi)
  .add(KeysApi)
  .add(TasksApi)
  .add(PlannedApi)
  .add(WebhooksApi)
  .addError(ValidationErrorWire)
  .addError(PayloadTooLargeWire)
  .addError(UnsupportedMediaTypeWire)
  .addError(RateLimitedWire)
  .addError(ServerErrorWire)
  .annotate(OpenApi.Title, "Lab Service")
  .annotate(OpenApi.Version, VERSION)
  .annotate(
    OpenApi.Description,
    "REST API for research labs. Every success is {data, meta}; every failure is {error:{code,message,status}}. " +
      "Every path is also served under /v1 as an alias of /api/v1."
  )
  .annotate(OpenApi.Transform, dropDecodeError) {}
