import type { Step } from "./Step.js"
import { Effect } from "effect"
import { makeInputCheck, makeUrlCheck } from "../InputCheck.js"
import type { RouteTable } from "../RouteTable.js"

/** No NUL, lone surrogate or over-deep JSON in the URL or the JSON body: 422 naming the field (src/http/InputCheck.ts). */
export const checkInput = (routes: RouteTable): Step => {
  const check = makeInputCheck(routes)
  return (app) => Effect.zipRight(check, app)
}

/** The URL half of checkInput, for groups whose handlers read and check their own bodies. */
export const checkUrl = (routes: RouteTable): Step => {
  const check = makeUrlCheck(routes)
  return (app) => Effect.zipRight(check, app)
}
