import { Effect, Schema } from "effect"
import { CONTENT_ONE_OF, CreateDataset, Dataset, DatasetId, DatasetListParams, UpdateDataset } from "../../datasets/Dataset.js"
import { Datasets } from "../../datasets/Datasets.js"
import { defineTool, toolInput, ToolPage, ToolPageOf } from "../McpTool.js"
import { listed } from "./Listing.js"

const { labId: _listLab, limit: _limit, cursor: _cursor, ...listFields } = DatasetListParams.fields
// the bodies are filtered structs (uri or path): their fields are those of the struct they filter
const { labId: _createLab, ...createFields } = CreateDataset.from.fields
const { labId: _updateLab, ...updateFields } = UpdateDataset.from.fields

/** The datasets tools: the lab's register of datasets, as `/api/v1/datasets` serves it. */
export const datasetTools = Effect.map(Datasets, (datasets) => [
  defineTool({
    name: "list_datasets",
    toolset: "datasets",
    access: "read",
    description: "List the lab's datasets (name, where the data is, format, size, version), newest first, optionally by format, tag or creation time.",
    input: toolInput({ ...listFields, ...ToolPage }),
    output: ToolPageOf(Dataset),
    run: listed(datasets.list)
  }),
  defineTool({
    name: "get_dataset",
    toolset: "datasets",
    access: "read",
    description: "Read one dataset's record (ds_…): where its data is (uri or lab path), format, size, rows, version and tags.",
    input: toolInput({ datasetId: DatasetId }),
    output: Dataset,
    run: ({ datasetId }, call) => datasets.get(call.labId, datasetId)
  }),
  defineTool({
    name: "create_dataset",
    toolset: "datasets",
    access: "write",
    description:
      "Register a dataset the lab uses: a name unique in the lab, its format, and where it is, either a uri (http(s)://, s3://, gs://) or a lab path (/data/train.csv). The data itself is not copied.",
    input: toolInput(createFields).pipe(Schema.filter((body) => CONTENT_ONE_OF(body, true))),
    output: Dataset,
    run: ({ labId: _labId, ...input }, call) => datasets.create(call.labId, input, call.actor)
  }),
  defineTool({
    name: "update_dataset",
    toolset: "datasets",
    access: "write",
    description:
      "Change a dataset's record: name, description, tags, or its content fields (uri or path, format, sizeBytes, rows), which raise its version.",
    input: toolInput({ datasetId: DatasetId, ...updateFields }).pipe(Schema.filter((body) => CONTENT_ONE_OF(body, false))),
    output: Dataset,
    hints: { destructive: true, idempotent: true },
    run: ({ datasetId, labId: _labId, ...patch }, call) => datasets.update(call.labId, datasetId, patch, call.actor)
  })
])
