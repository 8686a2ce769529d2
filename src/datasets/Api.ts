import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { CreateDataset, Dataset, DatasetId, DatasetListParams, UpdateDataset } from "./Dataset.js"

const DatasetPath = Schema.Struct({ id: DatasetId })
const LabQuery = Schema.Struct({ labId: LabRef })

/** Catalog: GET/POST /datasets. Extensions: GET/PATCH/DELETE /datasets/{id} (docs/datasets.md). */
export class DatasetsApi extends HttpApiGroup.make("datasets")
  .add(
    HttpApiEndpoint.get("list", "/datasets")
      .setUrlParams(DatasetListParams)
      .addSuccess(ListEnvelope(Dataset))
      .annotate(OpenApi.Summary, "The lab's datasets, newest first, filtered by format, tag and creation time")
  )
  .add(
    HttpApiEndpoint.post("create", "/datasets")
      .setPayload(CreateDataset)
      .addSuccess(Envelope(Dataset), { status: 201 })
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Register a dataset at a uri or a lab path (version 1)")
  )
  .add(
    HttpApiEndpoint.get("get", "/datasets/:id")
      .setPath(DatasetPath)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Dataset))
      .annotate(OpenApi.Summary, "One dataset (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/datasets/:id")
      .setPath(DatasetPath)
      .setPayload(UpdateDataset)
      .addSuccess(Envelope(Dataset))
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Change a dataset; a change of its content fields raises its version (extension)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/datasets/:id")
      .setPath(DatasetPath)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Dataset))
      .annotate(OpenApi.Summary, "Delete a dataset's record (the data itself is not touched) (extension)")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
