import { Effect } from "effect"
import type { Access, Principal } from "../auth/Principal.js"
import type { AccessDenied, OverRateLimit, UnknownLab } from "../common/DomainErrors.js"
import { countedOnce } from "../common/RequestContext.js"
import type { CheckedLab } from "../labs/LabId.js"
import { type Labs, withinBudget } from "../labs/Labs.js"

/**
 * The lab a tool call or a resource names, checked and counted against the lab's budget as REST's LabRequests does:
 * the window is recorded for the /mcp answer's headers; over it, OverRateLimit (a tool error saying when to retry).
 */
export const accessCounted = (
  labs: Labs,
  principal: Principal,
  ref: string,
  access: Access
): Effect.Effect<CheckedLab, UnknownLab | AccessDenied | OverRateLimit> =>
  Effect.flatMap(countedOnce((counted) => labs.accessAs(principal, ref, access, counted)), withinBudget)
