import { Effect } from "effect"
import { CreatePaper, Paper, PaperId, PaperListParams, TransitionPaper, UpdatePaper } from "../../papers/Paper.js"
import { Papers } from "../../papers/Papers.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"
import { listed } from "./Listing.js"

const { labId: _listLab, limit: _limit, cursor: _cursor, ...listFields } = PaperListParams.fields
const { labId: _createLab, ...createFields } = CreatePaper.fields
const { labId: _updateLab, ...updateFields } = UpdatePaper.fields
const { labId: _moveLab, ...transitionFields } = TransitionPaper.fields

/** The papers tools: the lab's papers and their lifecycle, as `/api/v1/papers` serves them. */
export const paperTools = Effect.map(Papers, (papers) => [
  defineTool({
    name: "list_papers",
    toolset: "papers",
    access: "read",
    description:
      "List the lab's papers, newest first, optionally with one status (draft, submitted, in_review, revision_requested, accepted, published, withdrawn) or in a time range.",
    input: toolInput({ ...listFields, ...ToolPage }),
    output: ToolPageOf(Paper),
    run: listed(papers.list)
  }),
  defineTool({
    name: "get_paper",
    toolset: "papers",
    access: "read",
    description: "Read one paper (paper_…): title, abstract, authors, its files in the lab, status, version and the publish loop's steps.",
    input: toolInput({ paperId: PaperId }),
    output: Paper,
    run: ({ paperId }, call) => papers.get(call.labId, paperId)
  }),
  defineTool({
    name: "create_paper",
    toolset: "papers",
    access: "write",
    description: "Start a paper as a draft (version 1): title, abstract, authors, and the lab paths of its files (write them with write_file).",
    input: toolInput(createFields),
    output: Paper,
    run: (input, call) => papers.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "update_paper",
    toolset: "papers",
    access: "write",
    description:
      "Change a paper's title, abstract, authors or files; the fields given replace the old ones. On a published paper this starts its next version as a draft.",
    input: toolInput({ paperId: PaperId, ...updateFields }),
    output: Paper,
    hints: { destructive: true, idempotent: true },
    run: ({ paperId, labId: _labId, ...patch }, call) => papers.update(call.labId, paperId, patch, call.actor)
  }),
  defineTool({
    name: "transition_paper",
    toolset: "papers",
    access: "write",
    description:
      "Move a paper along its lifecycle by hand: draft → submitted → in_review → accepted, in_review → revision_requested → submitted, or withdrawn (final) from any open state, with a note. A move the lifecycle does not allow is refused as a conflict; published is reached only with publish_paper.",
    input: toolInput({ paperId: PaperId, ...transitionFields }),
    output: Paper,
    hints: { destructive: true },
    run: ({ paperId, to, note }, call) => papers.moveTo(call.labId, paperId, to, note, call.actor)
  }),
  defineTool({
    name: "publish_paper",
    toolset: "papers",
    access: "write",
    description:
      "Start the publish loop: it checks the paper's files exist in the lab and advances it step by step to published, freezing that version. Follow it with get_paper (loop.steps). Asking again while it runs, or once published, changes nothing.",
    input: toolInput({ paperId: PaperId }),
    output: Paper,
    hints: { idempotent: true },
    run: ({ paperId }, call) => Effect.map(papers.publish(call.labId, paperId, call.actor), ({ paper }) => paper)
  })
])
