/**
 * The official clients are made, never edited: the checked-in files equal what
 * `npm run clients` makes from the contract now, and every operation of the
 * OpenAPI document has a client method (or is on the documented list of
 * operations no client offers).
 */
import { describe, expect, it } from "vitest"
import { LabServiceClient } from "../../clients/typescript/src/index.js"
import { renderClients, staleFiles } from "../../scripts/clients/generate.js"
import { buildModel, EXCLUDED, openApiDocument } from "../../scripts/clients/Model.js"

const documentOperations = () => {
  const ids: Array<string> = []
  const paths = openApiDocument()["paths"]
  for (const item of Object.values(typeof paths === "object" && paths !== null ? paths : {})) {
    for (const operation of Object.values(typeof item === "object" && item !== null ? item : {})) {
      const id: unknown = typeof operation === "object" && operation !== null ? Reflect.get(operation, "operationId") : undefined
      if (typeof id === "string") ids.push(id)
    }
  }
  return ids
}

describe("the generated clients", () => {
  it("are what npm run clients makes from the contract now", () => {
    const files = renderClients()
    expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(["clients/typescript/src/generated/client.ts"]))
    expect(staleFiles(files), "run `npm run clients` and commit the result").toEqual([])
  }, 60_000)

  it("give every operation of the OpenAPI document a method, bar the documented exclusions", () => {
    const model = buildModel()
    const offered = new Set(model.operations.map((o) => o.operationId))
    const missing = documentOperations().filter((id) => !offered.has(id) && EXCLUDED[id] === undefined)
    expect(missing).toEqual([])
    for (const excluded of model.excluded) expect(excluded.reason.length).toBeGreaterThan(10)

    // every operation is callable on the TypeScript client at its namespace and name
    const client = new LabServiceClient({ apiKey: "unused", baseUrl: "http://127.0.0.1:9" })
    const uncallable = model.operations.filter((op) => {
      let target: unknown = client
      for (const segment of op.namespace) target = typeof target === "object" && target !== null ? Reflect.get(target, segment) : undefined
      const method: unknown = typeof target === "object" && target !== null ? Reflect.get(target, op.name) : undefined
      return typeof method !== "function"
    })
    expect(uncallable.map((op) => op.operationId)).toEqual([])
  }, 60_000)

  it("name operations as the issue asks, one name each", () => {
    const names = new Map(buildModel().operations.map((op) => [op.operationId, [...op.namespace, op.name].join(".")]))
    expect(Object.fromEntries(["tasks.create", "tasks.list", "files.write", "files.read", "sync.status", "sync.pull", "experiments.listQueues"].map((id) => [id, names.get(id)]))).toEqual({
      "tasks.create": "tasks.create",
      "tasks.list": "tasks.list",
      "files.write": "files.write",
      "files.read": "files.read",
      "sync.status": "sync.status",
      "sync.pull": "sync.now",
      "experiments.listQueues": "experiments.queues.list"
    })
    expect(new Set(names.values()).size).toBe(names.size)
  }, 60_000)
})
