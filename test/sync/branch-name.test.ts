import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { BranchName } from "../../src/sync/RepoLink.js"

const accepts = (name: string) => Either.isRight(Schema.decodeUnknownEither(BranchName)(name))

describe("a link's branch name (git's check-ref-format)", () => {
  it("takes the names people use", () => {
    for (const name of ["main", "master", "release/1.0", "feature/x-y_z", "v2.1.3", "a".repeat(200)]) expect(accepts(name), name).toBe(true)
  })

  it("refuses what git cannot make a branch of (a link to `.` failed every sync with a 502)", () => {
    for (const name of ["", ".", "..", "a/.b", ".hidden", "a..b", "x.lock", "a/b.lock/c", "a/", "/a", "a//b", "a.", "a b", "a@{1}", "a".repeat(201)]) {
      expect(accepts(name), JSON.stringify(name)).toBe(false)
    }
  })
})
