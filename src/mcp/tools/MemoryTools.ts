import { Effect } from "effect"
import { CreateMemory, MemoryEntry, MemoryId, MemoryQuery } from "../../memory/Memory.js"
import { Memories } from "../../memory/Memories.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"
import { listed } from "./Listing.js"

const { labId: _listLab, ...queryFields } = MemoryQuery.fields
const { labId: _createLab, ...createFields } = CreateMemory.fields

/** The memory tools: agents' memory entries, as `/api/v1/memory` serves them. */
export const memoryTools = Effect.map(Memories, (memories) => [
  defineTool({
    name: "remember",
    toolset: "memory",
    access: "write",
    description:
      "Record a memory for an agent of the lab (agentId): an observation, fact, plan or reflection, with tags and an importance from 0 to 1. Entries are immutable: to correct one, forget it and remember again.",
    input: toolInput(createFields),
    output: MemoryEntry,
    run: (input, call) => memories.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "recall",
    toolset: "memory",
    access: "read",
    description:
      "List memory entries, newest first, optionally of one agent, kind or tag, or in a time range: use it at the start of a session to pick up where an agent left off. To find memories by what they say, use search with kinds [\"memory\"].",
    input: toolInput({ ...queryFields, ...ToolPage }),
    output: ToolPageOf(MemoryEntry),
    run: listed(memories.list)
  }),
  defineTool({
    name: "get_memory",
    toolset: "memory",
    access: "read",
    description: "Read one memory entry (mem_…) in full.",
    input: toolInput({ memoryId: MemoryId }),
    output: MemoryEntry,
    run: ({ memoryId }, call) => memories.get(call.labId, memoryId)
  }),
  defineTool({
    name: "forget",
    toolset: "memory",
    access: "write",
    description:
      "Delete a memory entry (mem_…) that is wrong or no longer true; answers the entry as it was. Entries cannot be edited: to correct one, forget it and remember the corrected text.",
    input: toolInput({ memoryId: MemoryId }),
    output: MemoryEntry,
    hints: { destructive: true },
    run: ({ memoryId }, call) => memories.remove(call.labId, memoryId, call.actor)
  })
])
