import { Schema } from "effect"
import { labGroup, labResource } from "../http/LabEndpoints.js"
import { CreateDataset, Dataset, DatasetId, DatasetListParams, UpdateDataset } from "./Dataset.js"

/** Catalog: GET/POST /datasets. Extensions: GET/PATCH/DELETE /datasets/{id} (docs/datasets.md). */
export class DatasetsApi extends labResource("datasets", {
  path: "/datasets",
  params: Schema.Struct({ id: DatasetId }),
  query: DatasetListParams,
  item: Dataset,
  create: CreateDataset,
  update: UpdateDataset,
  summaries: {
    list: "The lab's datasets, newest first, filtered by format, tag and creation time",
    create: "Register a dataset at a uri or a lab path (version 1)",
    get: "One dataset (extension)",
    update: "Change a dataset; a change of its content fields raises its version (extension)",
    delete: "Delete a dataset's record (the data itself is not touched) (extension)"
  },
  conflicts: ["create", "update"]
}).pipe(labGroup) {}
