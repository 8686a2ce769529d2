import { Schema } from "effect"
import { Body, DateRange, LabRef, LabResource, Name, resourceId, Tags, Text } from "../common/Schemas.js"

export const MAX_KNOWLEDGE_BODY = 100_000
export const MAX_SOURCES = 50

export const SourceUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return url.protocol === "http:" || url.protocol === "https:" || "must be an http(s) URL"
    } catch {
      return "must be an http(s) URL"
    }
  })
).annotations({ description: "http(s) URL, at most 2,048 characters" })

/** Where a piece of knowledge comes from: a titled link, a reference (DOI, arXiv id, paper or chat id), or both. */
export const Source = Schema.Struct({
  title: Schema.optional(Name(300)),
  url: Schema.optional(SourceUrl),
  ref: Schema.optional(Name(500)).annotations({ description: "a reference: DOI, arXiv id, paper_…, chats/<id>, …" })
})
  .pipe(
    Schema.filter((s) => s.title !== undefined || s.url !== undefined || s.ref !== undefined || "needs at least one of title, url, ref")
  )
  .annotations({ identifier: "KnowledgeSource", parseOptions: { onExcessProperty: "error" } })
export type Source = typeof Source.Type

export const Sources = Schema.Array(Source).pipe(Schema.maxItems(MAX_SOURCES))

export const KnowledgeBody = Text(MAX_KNOWLEDGE_BODY).pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be empty")
).annotations({
  description: `markdown, at most ${MAX_KNOWLEDGE_BODY} characters`
})
export const KnowledgeTitle = Name(300)

export const KnowledgeId = resourceId("KnowledgeId", "kn")
export type KnowledgeId = typeof KnowledgeId.Type

export const KnowledgeEntry = LabResource(KnowledgeId, {
  title: Schema.String,
  body: Schema.String.annotations({ description: "markdown" }),
  sources: Schema.Array(Source),
  tags: Schema.Array(Schema.String)
}).annotations({ identifier: "KnowledgeEntry" })
export type KnowledgeEntry = typeof KnowledgeEntry.Type

export const CreateKnowledge = Body({
  labId: LabRef,
  title: KnowledgeTitle,
  body: KnowledgeBody,
  sources: Schema.optionalWith(Sources, { default: () => [] }),
  tags: Schema.optionalWith(Tags, { default: () => [] })
}).annotations({ identifier: "CreateKnowledge" })
export type CreateKnowledge = typeof CreateKnowledge.Type

export const UpdateKnowledge = Body({
  labId: LabRef,
  title: Schema.optional(KnowledgeTitle),
  body: Schema.optional(KnowledgeBody),
  sources: Schema.optional(Sources).annotations({ description: "replaces the list" }),
  tags: Schema.optional(Tags).annotations({ description: "replaces the list" })
}).annotations({ identifier: "UpdateKnowledge" })
export type UpdateKnowledge = typeof UpdateKnowledge.Type

export const KnowledgeQuery = Schema.Struct({
  labId: LabRef,
  tag: Schema.optional(Schema.String.pipe(Schema.maxLength(64))).annotations({ description: "only entries with this tag" }),
  ...DateRange
})
