import { Effect } from "effect"
import { TransitionRefused } from "./DomainErrors.js"

/** Allowed transitions: state -> the states it may move to. */
export type Transitions<S extends string> = { readonly [K in S]: ReadonlyArray<S> }

/**
 * Lifecycles are enforced state machines: moving to a state not allowed from
 * the current one is 409 `conflict`, naming both and what is allowed.
 */
export const transition = <S extends string>(
  what: string,
  machine: Transitions<S>,
  from: S,
  to: S
): Effect.Effect<void, TransitionRefused> =>
  machine[from].includes(to) ? Effect.void : Effect.fail(new TransitionRefused({ what, from, to, allowed: machine[from] }))

/** Does the machine allow `from -> to`? */
export const allows = <S extends string>(machine: Transitions<S>, from: S, to: S): boolean => machine[from].includes(to)
