/**
 * The steps of the model-based sync test (test/support/SyncModel.ts) and their generators: short descriptions, so
 * that a shrunk counterexample reads as a recipe.
 */
import { FastCheck as fc } from "effect"
import { MAX_FILE_BYTES } from "../../src/sync/Rules.js"

/** Lab paths the API writes; outside pushes touch the same ones (as repository paths) and a few of their own. */
export const API_PATHS = ["/X.md", "/notes/a.md", "/notes/deep/b.md", "/c.txt"] as const
const OUTSIDE_PATHS = [...API_PATHS.map((p) => p.slice(1)), "notes/o.md", "node_modules/m.js", "app.min.js"]
/** Changed by a pulse push before a paused pull, so that the pull has a blob to read (the API never writes it). */
export const PULSE_PATH = "pulse.md"
/** In the repository when the lab is linked. */
export const INITIAL_REMOTE: Readonly<Record<string, string>> = { "X.md": "x0\n", "notes/a.md": "a0\n", "notes/o.md": "o0\n", "c.txt": "c0\n" }
/** Written in the lab before it is linked: never in git, so a sync must never remove it. */
export const LOCAL_ONLY: Readonly<Record<string, string>> = { "/local/only.md": "made before the link\n" }

/** Content as a step names it (short, so a counterexample reads well); `mib` is exactly 1 MiB of text. */
export type ApiContent = { readonly text: string } | "mib"
/** An outside push may also write binary content and text over 1 MiB (both left out by the sync rules). */
export type OutsideContent = ApiContent | "binary" | "huge" | null
export type Fault = "down" | "pushFails" | "pushLost"
export type ApiStep =
  | { readonly kind: "write"; readonly path: string; readonly content: ApiContent }
  | { readonly kind: "delete"; readonly path: string }
export type OutsideStep = { readonly kind: "outside"; readonly edits: ReadonlyArray<readonly [string, OutsideContent]> }
export type Step =
  | ApiStep
  | OutsideStep
  | { readonly kind: "webhook" }
  | { readonly kind: "forcedSync"; readonly subPath: string | null }
  | { readonly kind: "drain" }
  | { readonly kind: "fault"; readonly fault: Fault }
  | { readonly kind: "pausedPull"; readonly during: ReadonlyArray<ApiStep | OutsideStep> }
  | { readonly kind: "pausedPush"; readonly during: ReadonlyArray<ApiStep | OutsideStep> }
  | { readonly kind: "restart" }
  | { readonly kind: "checkpoint" }

/** Text of exactly 1 MiB (the largest file the rules take), ending with `tail`. */
const mibText = (tail: string) => `${"m".repeat(MAX_FILE_BYTES - Buffer.byteLength(tail))}${tail}`
const HUGE_TEXT = "h".repeat(MAX_FILE_BYTES + 1)
const BINARY = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1])

/** The text an API step writes; `unique` (a real run) makes every write's content its own. */
export const apiText = (content: ApiContent, unique: string | undefined) =>
  content === "mib"
    ? mibText(`mib${unique ?? ""}\n`)
    : unique === undefined
      ? content.text
      : `${content.text}${unique}\n`

export const outsideBytes = (content: OutsideContent): Uint8Array | null =>
  content === null ? null : content === "binary" ? BINARY : Buffer.from(content === "huge" ? HUGE_TEXT : apiText(content, undefined))


const text = fc.constantFrom("v1\n", "v2\n", "v3\n").map((t): ApiContent => ({ text: t }))
const apiContent = fc.oneof({ weight: 15, arbitrary: text }, { weight: 1, arbitrary: fc.constant<ApiContent>("mib") })
const apiStep: fc.Arbitrary<ApiStep> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("write" as const), path: fc.constantFrom(...API_PATHS), content: apiContent }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), path: fc.constantFrom(...API_PATHS) }) }
)
const outsideContent: fc.Arbitrary<OutsideContent> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("v1\n", "v2\n", "o1\n", "o2\n").map((t): OutsideContent => ({ text: t })) },
  { weight: 1, arbitrary: fc.constantFrom<OutsideContent>("binary", "huge") },
  { weight: 2, arbitrary: fc.constant(null) }
)
const outsideStep: fc.Arbitrary<OutsideStep> = fc.record({
  kind: fc.constant("outside" as const),
  edits: fc.uniqueArray(fc.tuple(fc.constantFrom(...OUTSIDE_PATHS), outsideContent), { minLength: 1, maxLength: 3, selector: (e) => e[0] })
})

const during = fc.array(fc.oneof({ weight: 4, arbitrary: apiStep }, { weight: 1, arbitrary: outsideStep }), { minLength: 1, maxLength: 3 })

/** One step; `faults` lists the faults the driver can inject. */
export const stepArbitrary = (faults: ReadonlyArray<Fault>): fc.Arbitrary<Step> =>
  fc.oneof(
    { weight: 8, arbitrary: apiStep },
    { weight: 3, arbitrary: outsideStep },
    { weight: 2, arbitrary: fc.constant<Step>({ kind: "webhook" }) },
    { weight: 1, arbitrary: fc.constantFrom<string | null>(null, "notes").map((subPath): Step => ({ kind: "forcedSync", subPath })) },
    { weight: 2, arbitrary: fc.constant<Step>({ kind: "drain" }) },
    { weight: 2, arbitrary: fc.constantFrom(...faults).map((fault): Step => ({ kind: "fault", fault })) },
    { weight: 1, arbitrary: during.map((d): Step => ({ kind: "pausedPull", during: d })) },
    { weight: 1, arbitrary: during.map((d): Step => ({ kind: "pausedPush", during: d })) },
    { weight: 1, arbitrary: fc.constant<Step>({ kind: "restart" }) },
    { weight: 1, arbitrary: fc.constant<Step>({ kind: "checkpoint" }) }
  )
