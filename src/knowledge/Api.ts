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
  summaries: {
    list: "The lab's knowledge, newest first, filtered by tag and time",
    create: "Add a knowledge entry",
    get: "One knowledge entry (extension)",
    update: "Change a knowledge entry (extension); sources and tags are replaced as a whole",
    delete: "Delete a knowledge entry (extension)"
  }
}).pipe(labGroup) {}
