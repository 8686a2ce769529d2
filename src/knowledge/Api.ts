import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { createIn, deleteById, getById, labGroup, listOf, paged, updateById } from "../http/LabEndpoints.js"
import { CreateKnowledge, KnowledgeEntry, KnowledgeId, KnowledgeQuery, UpdateKnowledge } from "./Knowledge.js"

const KnowledgePath = Schema.Struct({ id: KnowledgeId })

/** GET and POST /knowledge are catalog routes; reading, changing and deleting one entry are extensions. */
export class KnowledgeApi extends HttpApiGroup.make("knowledge")
  .add(
    listOf("/knowledge", paged(KnowledgeQuery.fields), KnowledgeEntry).annotate(
      OpenApi.Summary,
      "The lab's knowledge, newest first, filtered by tag and time"
    )
  )
  .add(createIn("/knowledge", CreateKnowledge, KnowledgeEntry).annotate(OpenApi.Summary, "Add a knowledge entry"))
  .add(getById("/knowledge/:id", KnowledgePath, KnowledgeEntry).annotate(OpenApi.Summary, "One knowledge entry (extension)"))
  .add(
    updateById("/knowledge/:id", KnowledgePath, UpdateKnowledge, KnowledgeEntry).annotate(
      OpenApi.Summary,
      "Change a knowledge entry (extension); sources and tags are replaced as a whole"
    )
  )
  .add(deleteById("/knowledge/:id", KnowledgePath, KnowledgeEntry).annotate(OpenApi.Summary, "Delete a knowledge entry (extension)"))
  .pipe(labGroup) {}
