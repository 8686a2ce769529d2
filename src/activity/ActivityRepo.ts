import { Effect, Schema } from "effect"
import { newId } from "../common/Ids.js"
import { makeLabTable } from "../db/LabTable.js"
import type { PageQuery } from "../db/Paging.js"
import type { LabId } from "../labs/LabId.js"
import { Activity } from "./Activity.js"

export class ActivityRepo extends Effect.Service<ActivityRepo>()("ActivityRepo", {
  effect: Effect.map(
    makeLabTable({
      table: "activity",
      row: Schema.typeSchema(Activity),
      columns: (activity: Activity) => ({ ...activity, data: JSON.stringify(activity.data) })
    }),
    (table) => ({
      /** Record an entry (inside the caller's transaction, when there is one). */
      record: (entry: Omit<Activity, "id" | "createdAt" | "ref"> & { readonly ref?: string | null }) => {
        const activity: Activity = { id: newId("act"), ...entry, ref: entry.ref ?? null, createdAt: new Date() }
        return Effect.as(Effect.orDie(table.insert(activity)), activity)
      },
      list: (labId: LabId, query: PageQuery) => table.page(labId, () => [], query)
    })
  )
}) {}
