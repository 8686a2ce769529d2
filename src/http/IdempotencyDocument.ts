import { HEADER } from "../idempotency/IdempotencyKeys.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The OpenAPI document's POST, PATCH and DELETE operations (webhook deliveries aside) take the header. */
export const declareIdempotencyKey = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = spec["paths"]
  if (!isRecord(paths)) return spec
  for (const [path, item] of Object.entries(paths)) {
    if (!isRecord(item) || path.startsWith("/api/webhooks")) continue
    for (const method of ["post", "patch", "delete"]) {
      const operation = item[method]
      if (!isRecord(operation)) continue
      const parameters = Array.isArray(operation["parameters"]) ? operation["parameters"] : []
      operation["parameters"] = [...parameters, { $ref: "#/components/parameters/IdempotencyKey" }]
    }
  }
  const components = isRecord(spec["components"]) ? spec["components"] : {}
  const declared = isRecord(components["parameters"]) ? components["parameters"] : {}
  components["parameters"] = {
    ...declared,
    IdempotencyKey: {
      name: HEADER,
      in: "header",
      required: false,
      description:
        "Makes a retry safe: the first request with a key is done and its answer kept for 24 hours, per credential; a " +
        "repeat with the same key, method, path and body gets that answer again (header Idempotent-Replayed: true) " +
        "without doing the work twice. The same key with another request is 422; while the first still runs, 409.",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]{1,255}$" }
    }
  }
  spec["components"] = components
  return spec
}
