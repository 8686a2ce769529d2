import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { createIn, deleteById, getById, labGroup, listOf, updateById } from "../http/LabEndpoints.js"
import { CreateDataset, Dataset, DatasetId, DatasetListParams, UpdateDataset } from "./Dataset.js"

const DatasetPath = Schema.Struct({ id: DatasetId })

/** Catalog: GET/POST /datasets. Extensions: GET/PATCH/DELETE /datasets/{id} (docs/datasets.md). */
export class DatasetsApi extends HttpApiGroup.make("datasets")
  .add(
    listOf("/datasets", DatasetListParams, Dataset).annotate(
      OpenApi.Summary,
      "The lab's datasets, newest first, filtered by format, tag and creation time"
    )
  )
  .add(
    createIn("/datasets", CreateDataset, Dataset)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Register a dataset at a uri or a lab path (version 1)")
  )
  .add(getById("/datasets/:id", DatasetPath, Dataset).annotate(OpenApi.Summary, "One dataset (extension)"))
  .add(
    updateById("/datasets/:id", DatasetPath, UpdateDataset, Dataset)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Change a dataset; a change of its content fields raises its version (extension)")
  )
  .add(
    deleteById("/datasets/:id", DatasetPath, Dataset).annotate(
      OpenApi.Summary,
      "Delete a dataset's record (the data itself is not touched) (extension)"
    )
  )
  .pipe(labGroup) {}
