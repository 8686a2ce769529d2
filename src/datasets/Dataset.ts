import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Tags, Text } from "../common/Schemas.js"
import { FilePath } from "../files/File.js"
import { PageParams } from "../db/Paging.js"

export const DatasetId = resourceId("DatasetId", "ds")
export type DatasetId = typeof DatasetId.Type

export const Dataset = LabResource(DatasetId, {
  name: Schema.String.annotations({ description: "unique in the lab (ignoring case)" }),
  description: Schema.String,
  uri: Schema.NullOr(Schema.String).annotations({ description: "where the data lives outside the lab: http(s)://, s3:// or gs://; null when it is a lab path" }),
  path: Schema.NullOr(Schema.String).annotations({ description: "the lab path of the data (/data/train.csv); null when it is at a uri" }),
  format: Schema.String.annotations({ description: "csv, parquet, jsonl, …" }),
  sizeBytes: Schema.NullOr(Schema.Number),
  rows: Schema.NullOr(Schema.Number),
  version: Schema.Number.annotations({
    description: "server-owned: 1 at creation, +1 on every change of the content fields (uri, path, format, sizeBytes, rows)"
  }),
  tags: Schema.Array(Schema.String)
}).annotations({ identifier: "Dataset" })
export type Dataset = typeof Dataset.Type

const PROTOCOLS = new Set(["http:", "https:", "s3:", "gs:"])

export const DatasetUri = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((raw) => {
    if (!URL.canParse(raw)) return "must be an absolute URL: http(s)://, s3:// or gs://"
    const url = new URL(raw)
    if (!PROTOCOLS.has(url.protocol)) return "must be an http(s)://, s3:// or gs:// URL"
    if (url.hostname === "") return "must name a host or bucket"
    if (url.username !== "" || url.password !== "") return "must not carry credentials"
    return true
  })
).annotations({ description: "http(s)://host/…, s3://bucket/key or gs://bucket/object" })

export const DatasetFormat = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9._+-]{0,31}$/, {
    message: () => "must be a lowercase format name such as csv, parquet, jsonl (at most 32 characters)"
  })
)

const Count = Schema.Number.pipe(
  Schema.int({ message: () => "must be a whole number" }),
  Schema.between(0, Number.MAX_SAFE_INTEGER, { message: () => "must be a whole number from 0" })
)

/** Where the data is: a uri or a lab path, not both (one of them on create); exported so the MCP tools check what the bodies check. */
export const CONTENT_ONE_OF = (body: { readonly uri?: string | undefined; readonly path?: string | undefined }, required: boolean) => {
  if (body.uri !== undefined && body.path !== undefined) return { path: ["uri"], message: "give either uri or path, not both" }
  if (required && body.uri === undefined && body.path === undefined) return { path: ["uri"], message: "give either uri (outside the lab) or path (a lab file)" }
  return true
}

export const CreateDataset = Body({
  labId: LabRef,
  name: Name(200),
  description: Schema.optionalWith(Text(10_000), { default: () => "" }),
  uri: Schema.optional(DatasetUri),
  path: Schema.optional(FilePath),
  format: DatasetFormat,
  sizeBytes: Schema.optional(Count),
  rows: Schema.optional(Count),
  tags: Schema.optionalWith(Tags, { default: () => [] })
}).pipe(
  Schema.filter((body) => CONTENT_ONE_OF(body, true)),
  Schema.annotations({ identifier: "CreateDataset" })
)
export type CreateDataset = typeof CreateDataset.Type

export const UpdateDataset = Body({
  labId: LabRef,
  name: Schema.optional(Name(200)),
  description: Schema.optional(Text(10_000)),
  uri: Schema.optional(DatasetUri).annotations({ description: "moves the dataset to this uri (its path becomes null)" }),
  path: Schema.optional(FilePath).annotations({ description: "moves the dataset to this lab path (its uri becomes null)" }),
  format: Schema.optional(DatasetFormat),
  sizeBytes: Schema.optional(Schema.NullOr(Count)),
  rows: Schema.optional(Schema.NullOr(Count)),
  tags: Schema.optional(Tags)
}).pipe(
  Schema.filter((body) => CONTENT_ONE_OF(body, false)),
  Schema.annotations({ identifier: "UpdateDataset" })
)
export type UpdateDataset = typeof UpdateDataset.Type

export const DatasetListParams = Schema.Struct({
  labId: LabRef,
  format: Schema.optional(DatasetFormat),
  tag: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))).annotations({
    description: "only datasets carrying this tag"
  }),
  ...DateRange,
  ...PageParams
})
