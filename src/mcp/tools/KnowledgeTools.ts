import { Effect } from "effect"
import { CreateKnowledge, KnowledgeEntry, KnowledgeId, KnowledgeQuery, UpdateKnowledge } from "../../knowledge/Knowledge.js"
import { KnowledgeBase } from "../../knowledge/KnowledgeBase.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"
import { listed } from "./Listing.js"

const { labId: _listLab, ...queryFields } = KnowledgeQuery.fields
const { labId: _createLab, ...createFields } = CreateKnowledge.fields
const { labId: _updateLab, ...updateFields } = UpdateKnowledge.fields

/** The knowledge tools: the lab's curated knowledge base, as `/api/v1/knowledge` serves it. */
export const knowledgeTools = Effect.map(KnowledgeBase, (knowledge) => [
  defineTool({
    name: "list_knowledge",
    toolset: "knowledge",
    access: "read",
    description:
      "List the lab's knowledge entries, newest first, optionally with one tag or in a time range. To find entries by what they say, use search with kinds [\"knowledge\"].",
    input: toolInput({ ...queryFields, ...ToolPage }),
    output: ToolPageOf(KnowledgeEntry),
    run: listed(knowledge.list)
  }),
  defineTool({
    name: "read_knowledge",
    toolset: "knowledge",
    access: "read",
    description: "Read one knowledge entry (kn_…): its markdown body, sources and tags.",
    input: toolInput({ knowledgeId: KnowledgeId }),
    output: KnowledgeEntry,
    run: ({ knowledgeId }, call) => knowledge.get(call.labId, knowledgeId)
  }),
  defineTool({
    name: "write_knowledge",
    toolset: "knowledge",
    access: "write",
    description:
      "Add what the lab has learned as a knowledge entry: a title, a markdown body, its sources (a URL, a DOI or arXiv id, a paper_… or chats/chat_… of the lab) and tags. Search first: to refine an entry that exists, use update_knowledge.",
    input: toolInput(createFields),
    output: KnowledgeEntry,
    run: (input, call) => knowledge.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "update_knowledge",
    toolset: "knowledge",
    access: "write",
    description:
      "Change a knowledge entry's title, body, sources or tags; the fields given replace the old ones whole (sources and tags too), the others stay.",
    input: toolInput({ knowledgeId: KnowledgeId, ...updateFields }),
    output: KnowledgeEntry,
    hints: { destructive: true, idempotent: true },
    run: ({ knowledgeId, labId: _labId, ...patch }, call) => knowledge.update(call.labId, knowledgeId, patch, call.actor)
  })
])
