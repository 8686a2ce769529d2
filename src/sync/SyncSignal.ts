import { Context, type Effect } from "effect"

/**
 * How the files API tells a lab's sync worker that there are writes to push,
 * without depending on the worker itself (layers wire the supervisor in).
 */
export class SyncSignal extends Context.Tag("SyncSignal")<
  SyncSignal,
  { readonly outboxChanged: (labId: string) => Effect.Effect<void> }
>() {}
