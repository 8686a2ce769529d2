import { Effect, Layer, Option } from "effect"
import { PushQueue, type Writer } from "../files/PushQueue.js"
import type { LabId } from "../labs/LabId.js"
import { SyncRepo } from "./SyncRepo.js"

/** The files API's push queue as the sync keeps it: the lab's outbox, and `wake` for its worker. */
export const pushQueueLayer = (wake: (labId: LabId) => Effect.Effect<void>) =>
  Layer.effect(
    PushQueue,
    Effect.map(SyncRepo, (repo) => ({
      queue: (labId: LabId, path: string, content: string | null, writer: Writer) =>
        Effect.flatMap(repo.link(labId), (link) =>
          Option.isSome(link) && link.value.autoPush ? Effect.as(repo.enqueue(labId, path, content, writer), true) : Effect.succeed(false)
        ),
      wake
    }))
  ).pipe(Layer.provide(SyncRepo.Default))
