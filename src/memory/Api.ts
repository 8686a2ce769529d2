import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { CreateMemory, MemoryEntry, MemoryId, MemoryQuery } from "./Memory.js"

/** GET and POST /memory are catalog routes; reading and deleting one entry are extensions. */
export class MemoryApi extends labResource("memory", {
  path: "/memory",
  params: Schema.Struct({ id: MemoryId }),
  query: paged(MemoryQuery.fields),
  item: MemoryEntry,
  create: CreateMemory,
  docs: {
    list: {
      summary: "List memory entries",
      description: "Agents' memory entries, newest first, filtered by `agentId`, `kind`, `tag` and creation time (`from` inclusive, `to` exclusive). To find entries by their words, use GET /api/v1/search with `kinds=memory`."
    },
    create: {
      summary: "Record a memory entry",
      description: "Stores an observation, fact, plan or reflection for an agent of the lab and moves the agent's `lastActiveAt` to it. 422 when `agentId` is not an agent of the lab, 409 when the agent is retired. Entries are immutable."
    },
    get: {
      summary: "Get a memory entry",
      description: "Extension. One memory entry by id."
    },
    delete: {
      summary: "Delete a memory entry",
      description: "Extension. Forgets the entry. Entries cannot be edited: to correct one, delete it and record another."
    }
  }
})
  .pipe(labGroup)
  .addError(ConflictWire)
  .annotate(OpenApi.Description, "Agents' memory: immutable observations, facts, plans and reflections, each with tags and an importance.") {}
