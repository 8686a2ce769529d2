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
  summaries: {
    list: "Agents' memory entries, newest first, filtered by agent, kind, tag and time",
    create: "Record a memory entry for an agent (422 for an agent not in the lab, 409 for a retired one)",
    get: "One memory entry (extension)",
    delete: "Forget a memory entry (extension)"
  }
})
  .pipe(labGroup)
  .addError(ConflictWire) {}
