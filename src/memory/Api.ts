import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { createIn, deleteById, getById, labGroup, listOf, paged } from "../http/LabEndpoints.js"
import { CreateMemory, MemoryEntry, MemoryId, MemoryQuery } from "./Memory.js"

const MemoryPath = Schema.Struct({ id: MemoryId })

/** GET and POST /memory are catalog routes; reading and deleting one entry are extensions. */
export class MemoryApi extends HttpApiGroup.make("memory")
  .add(
    listOf("/memory", paged(MemoryQuery.fields), MemoryEntry).annotate(
      OpenApi.Summary,
      "Agents' memory entries, newest first, filtered by agent, kind, tag and time"
    )
  )
  .add(
    createIn("/memory", CreateMemory, MemoryEntry).annotate(
      OpenApi.Summary,
      "Record a memory entry for an agent (422 for an agent not in the lab, 409 for a retired one)"
    )
  )
  .add(getById("/memory/:id", MemoryPath, MemoryEntry).annotate(OpenApi.Summary, "One memory entry (extension)"))
  .add(deleteById("/memory/:id", MemoryPath, MemoryEntry).annotate(OpenApi.Summary, "Forget a memory entry (extension)"))
  .pipe(labGroup)
  .addError(ConflictWire) {}
