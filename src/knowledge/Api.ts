import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { labGroup, labResource, paged } from "../http/LabEndpoints.js"
import { CreateKnowledge, KnowledgeEntry, KnowledgeId, KnowledgeQuery, UpdateKnowledge } from "./Knowledge.js"

/** GET and POST /knowledge are catalog routes; reading, changing and deleting one entry are extensions. */
export class KnowledgeApi extends labResource("knowledge", {
  path: "/knowledge",
  params: Schema.Struct({ id: KnowledgeId }),
  query: paged(KnowledgeQuery.fields),
  item: KnowledgeEntry,
  create: CreateKnowledge,
  update: UpdateKnowledge,
  docs: {
    list: {
      summary: "List knowledge entries",
      description: "The lab's knowledge entries, newest first, filtered by `tag` and creation time. To find entries by their words, use GET /api/v1/search with `kinds=knowledge`."
    },
    create: {
      summary: "Add a knowledge entry",
      description: "Records a piece of the lab's curated knowledge: a title, a body, its sources and tags. A chat's outcome can become one through POST /api/v1/chats/{id}/promote."
    },
    get: {
      summary: "Get a knowledge entry",
      description: "Extension. One knowledge entry by id."
    },
    update: {
      summary: "Update a knowledge entry",
      description: "Extension. Changes the fields given; `sources` and `tags`, when given, replace the old lists as a whole."
    },
    delete: {
      summary: "Delete a knowledge entry",
      description: "Extension. Removes the entry."
    }
  }
})
  .pipe(labGroup)
  .annotate(OpenApi.Description, "The lab's curated knowledge: entries with a body, sources and tags, written directly or promoted from a chat.") {}
