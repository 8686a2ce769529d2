import { Effect } from "effect"
import { Conflict } from "../http/Errors.js"

/** Allowed transitions: state -> the states it may move to. */
export type Transitions<S extends string> = { readonly [K in S]: ReadonlyArray<S> }

/**
 * Lifecycles are enforced state machines: moving to a state not allowed from
 * the current one is 409 `conflict`, naming both and what is allowed.
 */
export const transition = <S extends string>(what: string, machine: Transitions<S>, from: S, to: S): Effect.Effect<void, Conflict> =>
  machine[from].includes(to)
    ? Effect.void
    : Effect.fail(
        new Conflict({
          message:
            machine[from].length === 0
              ? `${what} is ${from}, a final state: it cannot become ${to}`
              : `${what} is ${from}: it can become ${machine[from].join(", ")}, not ${to}`
        })
      )

/** Does the machine allow `from -> to`? */
export const allows = <S extends string>(machine: Transitions<S>, from: S, to: S): boolean => machine[from].includes(to)
