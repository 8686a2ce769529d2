import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Text } from "../common/Schemas.js"
import { FilePath } from "../files/File.js"
import { PageParams } from "../db/Paging.js"

/** Figure files by extension (case-insensitive) and their media types. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  webp: "image/webp",
  pdf: "application/pdf"
}

const extensionOf = (path: string): string => {
  const slash = path.lastIndexOf("/")
  const dot = path.lastIndexOf(".")
  // a dot that starts the name (`.png`) begins no extension
  return dot > slash + 1 ? path.slice(dot + 1).toLowerCase() : ""
}

/** The media type of a figure file, or null when the name is not a figure's. */
export const mediaTypeOf = (path: string): string | null => MEDIA_TYPES[extensionOf(path)] ?? null

/** Is this (repository or lab) path a figure: .png .jpg .jpeg .gif .svg .webp .pdf? */
export const isFigurePath = (path: string): boolean => mediaTypeOf(path) !== null

export const FigureSource = Schema.Literal("git", "api").annotations({
  description: "git: an image or PDF of the linked repository, recorded by the sync; api: registered through POST /figures"
})
export type FigureSource = typeof FigureSource.Type

export const FigureId = resourceId("FigureId", "fig")
export type FigureId = typeof FigureId.Type

export const Figure = LabResource(FigureId, {
  source: FigureSource,
  title: Schema.String.annotations({ description: "git figures: the file name until changed" }),
  caption: Schema.NullOr(Schema.String),
  path: Schema.NullOr(Schema.String).annotations({ description: "the lab path (/figures/loss.png), or null for a figure at a url" }),
  url: Schema.NullOr(Schema.String).annotations({ description: "where a registered figure lives outside the lab, or null" }),
  mediaType: Schema.NullOr(Schema.String).annotations({ description: "from the extension: image/png, application/pdf, …" }),
  size: Schema.NullOr(Schema.Number).annotations({ description: "git figures: bytes of the blob" }),
  blobId: Schema.NullOr(Schema.String).annotations({ description: "git figures: the git blob id" }),
  commit: Schema.NullOr(Schema.String).annotations({ description: "git figures: the commit the sync last saw it change in" }),
  experimentId: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Figure" })
export type Figure = typeof Figure.Type

const FigurePath = FilePath.pipe(
  Schema.filter((path) => isFigurePath(path) || "must name a figure file: .png, .jpg, .jpeg, .gif, .svg, .webp or .pdf")
)

const FigureUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((raw) => {
    if (!URL.canParse(raw)) return "must be an absolute http(s) URL"
    const url = new URL(raw)
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL"
    if (url.username !== "" || url.password !== "") return "must not carry credentials"
    return true
  })
)

export const ExperimentRef = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be an experiment id (exp_…)" })
)

export const CreateFigure = Body({
  labId: LabRef,
  title: Name(300),
  caption: Schema.optional(Text(5_000)),
  experimentId: Schema.optional(ExperimentRef),
  path: Schema.optional(FigurePath),
  url: Schema.optional(FigureUrl)
}).pipe(
  Schema.filter((body) =>
    (body.path === undefined) !== (body.url === undefined) || {
      path: [body.path === undefined ? "path" : "url"],
      message: body.path === undefined ? "give either path (a lab file) or url" : "give either path or url, not both"
    }
  ),
  Schema.annotations({ identifier: "CreateFigure" })
)
export type CreateFigure = typeof CreateFigure.Type

export const UpdateFigure = Body({
  labId: LabRef,
  title: Schema.optional(Name(300)),
  caption: Schema.optional(Schema.NullOr(Text(5_000))),
  experimentId: Schema.optional(Schema.NullOr(ExperimentRef))
}).annotations({ identifier: "UpdateFigure" })
export type UpdateFigure = typeof UpdateFigure.Type

export const FigureListParams = Schema.Struct({
  labId: LabRef,
  source: Schema.optional(FigureSource),
  experimentId: Schema.optional(ExperimentRef),
  ...DateRange,
  ...PageParams
})

/** A figure file the sync met in the repository. */
export interface GitFigureFile {
  readonly path: string
  readonly oid: string
  readonly size: number
}
