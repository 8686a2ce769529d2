import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { fromRepoPath, MAX_PATH_BYTES, normalizePath, normalizePrefix, toRepoPath } from "../../src/files/Paths.js"

/** The normalised path, or the reason it was refused, as one comparable value. */
const outcome = (result: Either.Either<string, string>) =>
  Either.match(result, { onLeft: (reason) => ({ refused: reason }), onRight: (path) => ({ path }) })

/** One test per pair: `normalize` accepts the raw path as the normalised one. */
const itNormalises = (normalize: (raw: string) => Either.Either<string, string>, accepted: ReadonlyArray<readonly [raw: string, normalised: string]>) =>
  it.each(accepted)("normalises %j to %j", (raw, normalised) => {
    expect(outcome(normalize(raw))).toEqual({ path: normalised })
  })

describe("normalizePath", () => {
  const accepted: ReadonlyArray<readonly [raw: string, normalised: string]> = [
    ["/a.md", "/a.md"],
    ["/notes/idea.md", "/notes/idea.md"],
    ["/notes//a/./b.md", "/notes/a/b.md"],
    ["//notes///a.md", "/notes/a.md"],
    ["/a/../b.md", "/b.md"],
    ["/a/b/../../c.md", "/c.md"],
    ["/a/./b/../c/./d.md", "/a/c/d.md"],
    ["/./a.md", "/a.md"],
    ["/a/..b.md", "/a/..b.md"],
    ["/a/b..", "/a/b.."],
    ["/.../x", "/.../x"],
    ["/.hidden", "/.hidden"],
    ["/.gitignore", "/.gitignore"],
    ["/.github/workflows/ci.yml", "/.github/workflows/ci.yml"],
    ["/docs/.gitkeep", "/docs/.gitkeep"],
    ["/my.git/x", "/my.git/x"],
    ["/a b/c d.md", "/a b/c d.md"],
    // unicode passes through untouched (no case folding, no re-normalisation)
    ["/notes/café.md", "/notes/café.md"],
    ["/notes/cafe\u0301.md", "/notes/cafe\u0301.md"],
    ["/研究/ノート.md", "/研究/ノート.md"],
    ["/émoji/😀.md", "/émoji/😀.md"],
    ["/Résumé/./../Ünïcödé.md", "/Ünïcödé.md"],
    ["/README.MD", "/README.MD"]
  ]

  itNormalises(normalizePath, accepted)

  it("is idempotent on what it accepts", () => {
    for (const [, normalised] of accepted) expect(outcome(normalizePath(normalised))).toEqual({ path: normalised })
  })

  const refused: ReadonlyArray<readonly [why: string, raw: string, reason: RegExp]> = [
    ["empty", "", /empty/],
    ["relative", "notes/a.md", /start with \//],
    ["relative with a dot", "./a.md", /start with \//],
    ["the root", "/", /directory|root/],
    ["only slashes", "///", /directory|root/],
    ["the root through dots", "/.", /root/],
    ["the root after climbing", "/a/..", /root/],
    ["a trailing slash", "/notes/", /directory/],
    ["escaping the root", "/../x", /escape/],
    ["escaping the root later", "/a/../../x", /escape/],
    ["escaping after a dot", "/./../x.md", /escape/],
    ["NUL", "/a\0b.md", /NUL/],
    ["a backslash", "/a\\b.md", /backslash/],
    ["a Windows-style path", "\\notes\\a.md", /start with \/|backslash/],
    ["inside .git", "/.git/config", /\.git/],
    ["a file named .git", "/.git", /\.git/],
    ["a nested .git", "/vendor/lib/.git/HEAD", /\.git/],
    ["a .git reached by climbing", "/a/../.git/hooks/pre-commit", /\.git/],
    ["a .git in another case (git refuses it too)", "/.GIT/config", /\.git/i],
    ["a .Git in mixed case", "/docs/.Git/HEAD", /\.git/i]
  ]

  it.each(refused)("refuses %s", (_, raw, reason) => {
    const result = normalizePath(raw)
    expect(Either.isLeft(result), `${JSON.stringify(raw)} was accepted as ${JSON.stringify(result)}`).toBe(true)
    expect(outcome(result)).toEqual({ refused: expect.stringMatching(reason) })
  })

  it(`accepts exactly ${MAX_PATH_BYTES} bytes of UTF-8 and refuses one more`, () => {
    expect(MAX_PATH_BYTES).toBe(1024)
    const longest = `/${"a".repeat(MAX_PATH_BYTES - 1)}`
    expect(outcome(normalizePath(longest))).toEqual({ path: longest })
    expect(outcome(normalizePath(`${longest}b`))).toEqual({ refused: expect.stringMatching(/1,?024/) })
    expect(outcome(normalizePath(`/dir/${"x".repeat(2000)}`))).toEqual({ refused: expect.stringMatching(/1,?024/) })
    // characters of three bytes: 341 of them fit, 342 do not (a database index entry holds about 2,700 bytes)
    expect(outcome(normalizePath(`/${"文".repeat(341)}`))).toEqual({ path: `/${"文".repeat(341)}` })
    expect(outcome(normalizePath(`/${"文".repeat(342)}`))).toEqual({ refused: expect.stringMatching(/1,?024 bytes/) })
    expect(outcome(normalizePath(`/${"😀".repeat(256)}`))).toEqual({ refused: expect.stringMatching(/1,?024 bytes/) })
  })
})

describe("normalizePrefix", () => {
  const accepted: ReadonlyArray<readonly [raw: string, normalised: string]> = [
    ["", "/"],
    ["/", "/"],
    ["//", "/"],
    ["/notes", "/notes/"],
    ["/notes/", "/notes/"],
    ["/notes//", "/notes/"],
    ["//notes", "/notes/"],
    ["/notes/./drafts", "/notes/drafts/"],
    ["/notes/drafts/..", "/notes/"],
    ["/notes/..", "/"],
    ["/研究/", "/研究/"],
    ["/a.b", "/a.b/"]
  ]

  itNormalises(normalizePrefix, accepted)

  it("gives /notes and /notes/ the same meaning", () => {
    expect(normalizePrefix("/notes")).toEqual(normalizePrefix("/notes/"))
  })

  const refused: ReadonlyArray<readonly [why: string, raw: string]> = [
    ["relative", "notes"],
    ["escaping the root", "/../x"],
    ["escaping the root from the root", "/.."],
    ["NUL", "/a\0b"],
    ["a backslash", "/a\\b"],
    ["inside .git", "/.git"],
    ["inside .git with a slash", "/.git/"]
  ]

  it.each(refused)("refuses %s", (_, raw) => {
    expect(Either.isLeft(normalizePrefix(raw)), JSON.stringify(normalizePrefix(raw))).toBe(true)
  })
})

describe("repository paths", () => {
  it("drops and restores the leading slash", () => {
    expect(toRepoPath("/notes/a.md")).toBe("notes/a.md")
    expect(fromRepoPath("notes/a.md")).toBe("/notes/a.md")
    expect(fromRepoPath(toRepoPath("/研究/ノート.md"))).toBe("/研究/ノート.md")
  })
})
