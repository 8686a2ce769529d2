import * as OpenApi from "@effect/platform/OpenApi"
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
  docs: {
    list: {
      summary: "List datasets",
      description: "The lab's datasets, newest first, filtered by `format`, `tag` and creation time."
    },
    create: {
      summary: "Register a dataset",
      description: "Records where a dataset is (a `uri` outside the lab or a lab `path`), its format and size; the service keeps the record, not the data. It starts at version 1. 409 when the name is taken in the lab."
    },
    get: {
      summary: "Get a dataset",
      description: "Extension. One dataset by id."
    },
    update: {
      summary: "Update a dataset",
      description: "Extension. Changes the fields given. A change of `uri`, `path`, `format`, `sizeBytes` or `rows` (the data changed or moved) raises `version`; name, description and tags do not. 409 when the new name is taken."
    },
    delete: {
      summary: "Delete a dataset",
      description: "Extension. Removes the dataset's record; the data itself is not touched."
    }
  },
  conflicts: ["create", "update"]
})
  .pipe(labGroup)
  .annotate(OpenApi.Description, "Records of the lab's datasets: where the data is, its format, size and version. The data itself stays where it is.") {}
