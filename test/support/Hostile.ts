/**
 * Hostile values for the fuzz test (test/support/Fuzz.ts): strings, numbers,
 * shapes, whole bodies, cursors and git hosts' payloads that have broken services.
 */
import { FastCheck as fc } from "effect"

const LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]

/** Strings that have broken services: NUL, lone surrogates, odd Unicode, path tricks, very long ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    ...LONE_SURROGATES,
    "x\ud83d",
    "\ud83dx",
    "💥\u0000",
    "../../etc/passwd",
    "/.git/config",
    "%00",
    "%",
    "%ff",
    "'; DROP TABLE tasks; --",
    "\\",
    "\u202e\u2066",
    "\ufeff",
    "ｆｕｌｌ",
    "e\u0301\u0301\u0301",
    "",
    " ",
    "\t\n\r",
    "null",
    "NaN",
    "-1",
    "1e400",
    "99999-01-01",
    "-000001-01-01T00:00:00Z",
    "0000-01-01",
    "2024-02-30",
    "&|!:*()<>",
    "{{7*7}}${7*7}",
    "𝕏".repeat(2_000),
    "x".repeat(100_000)
  ),
  // any UTF-16 code units, lone surrogates included
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)), maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 })
)

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 2 ** 53 + 2, 2 ** 63, 1e308, -1e308, 5e-324, -0, 0.5, -1),
  fc.double({ noNaN: true, noDefaultInfinity: true })
)

/** `levels` arrays deep, as JSON text. */
const deepText = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`

/** Any JSON-ish value a field might wrongly get. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.constantFrom(true, false, null, [], {}, [[]], { "\u0000": 1 }, { "\ud800": "x" }, ["\u0000"]),
  fc.integer({ min: 65, max: 300 }).map((n) => JSON.parse(deepText(n))),
  fc.dictionary(hostileString, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
)

/** Whole bodies that are not what any route expects, as raw text. */
export const hostileBody: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 65, max: 20_000 }).map(deepText),
  fc.integer({ min: 65, max: 5_000 }).map((n) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`),
  fc.constantFrom("1e400", "-1e400", "{", "[1,", "nul", '"\\ud800"', '{"labId":"\\u0000"}', '{"__proto__":{"x":1}}', "[]", "0", '""', "true", "\u0000"),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v))
)

/** A cursor as this service would never issue it: base64url JSON with hostile contents. */
export const hostileCursor: fc.Arbitrary<string> = fc
  .oneof(
    fc.record({ createdAt: fc.constantFrom("99999-01-01", "2024-01-01T00:00:00Z", "garbage"), id: hostileString }),
    fc.record({ count: hostileNumber, contributor: hostileString }),
    fc.record({ path: hostileString }),
    fc.record({ seq: hostileNumber }),
    fc.record({ bucket: fc.constantFrom(null, "99999-01-01"), name: hostileString }),
    hostileValue
  )
  .map((position) => Buffer.from(JSON.stringify(position) ?? "null").toString("base64url"))

/** A git host's push, with hostile names in it, as JSON or as GitHub's form-encoded `payload`. */
export const webhookBody: fc.Arbitrary<{ body: string; contentType: string; headers: Record<string, string> }> = fc
  .record({
    name: fc.oneof(hostileString, fc.constant("lab/repo")),
    url: fc.oneof(hostileString, fc.constant("https://example.org/lab/repo.git")),
    ref: fc.oneof(hostileString, fc.constant("refs/heads/main")),
    form: fc.boolean(),
    event: fc.constantFrom("push", "ping", "issues", "Push Hook", "repo:push")
  })
  .map(({ name, url, ref, form, event }) => {
    const json = JSON.stringify({
      ref,
      after: "0".repeat(40),
      repository: { full_name: name, clone_url: url, html_url: url },
      project: { path_with_namespace: name, git_http_url: url },
      push: { changes: [{ new: { name: ref, target: { hash: "0".repeat(40) } } }] }
    })
    const headers = {
      "x-github-event": event,
      "x-gitlab-event": event,
      "x-gitea-event": event,
      "x-event-key": event,
      "x-github-delivery": "fuzz-delivery",
      "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      "x-gitlab-token": "fuzz"
    }
    return form
      ? { body: `payload=${encodeURIComponent(json)}`, contentType: "application/x-www-form-urlencoded", headers }
      : { body: json, contentType: "application/json", headers }
  })
