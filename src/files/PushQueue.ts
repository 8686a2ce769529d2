import { Context, type Effect } from "effect"
import type { LabId } from "../labs/LabId.js"

/** Who made a write: the activity log's actor (the principal's id) and the name its commit is authored by. */
export interface Writer {
  readonly actor: string
  readonly name: string
}

/**
 * Where the files API leaves a write for the lab's linked repository, inside the write's own transaction, and how it
 * wakes the lab's sync worker once that transaction committed. The sync implements it (src/sync/PushQueueLive.ts), so
 * the files API imports nothing of the sync.
 */
export class PushQueue extends Context.Tag("PushQueue")<
  PushQueue,
  {
    /** Queue the change when the lab's link auto-pushes (in the caller's transaction); true when queued. */
    readonly queue: (labId: LabId, path: string, content: string | null, writer: Writer) => Effect.Effect<boolean>
    /** Tell the lab's sync worker that writes wait in its outbox. */
    readonly wake: (labId: LabId) => Effect.Effect<void>
  }
>() {}
