import { Brand } from "effect"
import type { Lab } from "./Lab.js"

/**
 * The id of a lab the caller may act on. Services take nothing else, so the compiler sees to it that no service
 * runs on a lab nobody checked: `Labs.access` makes one after checking the request's credential, and `systemLab`
 * makes one for the service's own background work (sync workers, the scheduler) on labs it read from its own rows.
 */
export type LabId = string & Brand.Brand<"LabId">

const make = Brand.nominal<LabId>()

/** A lab that passed the access check of the request at hand. */
export interface CheckedLab extends Omit<Lab, "id"> {
  readonly id: LabId
}

/** Only for Labs.access: the lab it checked. */
export const checked = (lab: Lab): CheckedLab => ({ ...lab, id: make(lab.id) })

/** A lab the service acts on by itself (a worker, a scheduled job, a webhook it verified): no credential involved. */
export const systemLab = (id: string): LabId => make(id)
