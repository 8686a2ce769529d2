import { Effect, Either, Schema } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DeletedFile, File, FileSummary } from "../../src/files/File.js"
import { Lab } from "../../src/labs/Lab.js"
import { Task } from "../../src/tasks/Task.js"
import { data, expectError, json, page } from "../support/http.js"
import { operatorOf, type Params, queryOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

// ---------------------------------------------------------------------------
// helpers

const execFileAsync = promisify(execFile)

/** What git itself says the blob id of this content is. */
const gitHashObject = async (content: string): Promise<string> => {
  const running = execFileAsync("git", ["hash-object", "--stdin"], { maxBuffer: 1024 * 1024 })
  running.child.stdin?.end(Buffer.from(content, "utf8"))
  const { stdout } = await running
  return stdout.trim()
}

/** A file as it goes over the wire: timestamps are strings. */
const WireFile = Schema.encodedSchema(File)
type WireFile = typeof WireFile.Type
const WireSummary = Schema.encodedSchema(FileSummary)

const MiB = 1_048_576
const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

const query = (params: Params) => `/api/v1/files?${queryOf(params)}`

/** UTF-8 byte order, which is PostgreSQL's "C" collation. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))

let server: TestServer
let lab: Lab
let other: Lab
let readerKey: string
let writerKey: string
let otherKey: string

const createLab = (slug: string) => operatorOf(server).createLab(slug)
const createKey = async (scope: string) => (await operatorOf(server).createKey(scope)).key

type Body = Record<string, unknown>

const post = (json: Body, token = server.adminKey) => server.request("POST", "/api/v1/files", { token, json })
const patch = (json: Body, token = server.adminKey) => server.request("PATCH", "/api/v1/files", { token, json })
const get = (params: Record<string, string | number | undefined>, token = server.adminKey) => server.request("GET", query(params), { token })
const del = (params: Record<string, string | undefined>, token = server.adminKey) => server.request("DELETE", query(params), { token })

const created = async (labId: string, path: string, content: string) => data(await post({ labId, path, content }), WireFile, 201)
const read = async (labId: string, path: string) => data(await get({ labId, path }), WireFile)

/** Every path of a listing, walked page by page. */
const walk = async (labId: string, limit: number, prefix?: string) => {
  const pages: Array<ReadonlyArray<string>> = []
  let cursor: string | undefined
  for (let guard = 0; guard < 100; guard++) {
    const result = await page(await get({ labId, prefix, limit, cursor }), WireSummary)
    pages.push(result.data.map((f) => f.path))
    expect(result.meta.has_more).toBe(result.meta.next_cursor !== null)
    if (result.meta.next_cursor === null) return pages
    cursor = result.meta.next_cursor
  }
  throw new Error("the listing never ended")
}

beforeAll(async () => {
  server = await startTestServer()
  lab = await createLab("files-lab")
  other = await createLab("files-other")
  readerKey = await createKey("lab:files-lab:r")
  writerKey = await createKey("lab:files-lab:rw")
  otherKey = await createKey("lab:files-other:rw")
})
afterAll(() => server.close())

// ---------------------------------------------------------------------------

describe("reading and writing a file", () => {
  it("creates with POST (201) and reads back labId, path, content, size, git blob sha, source and updatedAt", async () => {
    const content = "# Idea\n\nünïcödé · 研究 · 😀\r\nlast line without newline"
    const before = Date.now()
    const written = await data(await post({ labId: lab.slug, path: "/notes/idea.md", content }, writerKey), WireFile, 201)
    const after = Date.now()
    const file = await read(lab.slug, "/notes/idea.md")

    expect(file).toEqual(written)
    expect(file).toMatchObject({ labId: lab.id, path: "/notes/idea.md", content, source: "api" })
    expect(file.size).toBe(Buffer.byteLength(content, "utf8"))
    expect(file.size).toBeGreaterThan(content.length)
    expect(file.sha).toBe(await gitHashObject(content))
    expect(new Date(file.updatedAt).toISOString()).toBe(file.updatedAt)
    expect(Date.parse(file.updatedAt)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(file.updatedAt)).toBeLessThanOrEqual(after + 1000)
    // labId may be the id or the slug
    expect(await read(lab.id, "/notes/idea.md")).toEqual(file)
  })

  it("overwrites with POST (200): new content and sha, same createdAt", async () => {
    const first = await created(lab.id, "/overwrite.md", "version 1\n")
    const second = await data(await post({ labId: lab.id, path: "/overwrite.md", content: "version 2\n" }), WireFile, 200)
    expect(second).toMatchObject({ path: "/overwrite.md", content: "version 2\n", createdAt: first.createdAt })
    expect(second.sha).toBe(await gitHashObject("version 2\n"))
    expect(second.sha).not.toBe(first.sha)
    expect(Date.parse(second.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.updatedAt))
    expect(await read(lab.id, "/overwrite.md")).toMatchObject({ content: "version 2\n", sha: second.sha })
  })

  it("stores an empty file with git's empty blob id", async () => {
    const file = await created(lab.id, "/empty.txt", "")
    expect(file).toMatchObject({ content: "", size: 0, sha: EMPTY_BLOB })
    expect(await gitHashObject("")).toBe(EMPTY_BLOB)
  })

  it("updates with PATCH (200) an existing file", async () => {
    await created(lab.id, "/patch-me.md", "old")
    const updated = await data(await patch({ labId: lab.id, path: "/patch-me.md", content: "new" }), WireFile)
    expect(updated).toMatchObject({ content: "new", sha: await gitHashObject("new") })
    expect(await read(lab.id, "/patch-me.md")).toMatchObject({ content: "new" })
  })

  it("answers PATCH on a missing file with 404 not_found, and creates nothing", async () => {
    await expectError(await patch({ labId: lab.id, path: "/never/written.md", content: "x" }), 404, "not_found")
    await expectError(await get({ labId: lab.id, path: "/never/written.md" }), 404, "not_found")
  })

  it("answers GET of a missing file with 404 not_found", async () => {
    await expectError(await get({ labId: lab.id, path: "/no/such/file.md" }), 404, "not_found")
  })

  it("deletes: then GET is 404 and a second DELETE is 404", async () => {
    const file = await created(lab.id, "/doomed.md", "bye")
    const deleted = await data(await del({ labId: lab.slug, path: "/doomed.md" }), DeletedFile)
    expect(deleted).toEqual({ labId: lab.id, path: "/doomed.md", sha: file.sha, deleted: true })
    await expectError(await get({ labId: lab.id, path: "/doomed.md" }), 404, "not_found")
    await expectError(await del({ labId: lab.id, path: "/doomed.md" }), 404, "not_found")
    const listing = await page(await get({ labId: lab.id, limit: 100 }), WireSummary)
    expect(listing.data.map((f) => f.path)).not.toContain("/doomed.md")
  })
})

describe("paths", () => {
  it("normalises on write and on read", async () => {
    const file = await created(lab.id, "/paths/notes//a/./b.md", "b")
    expect(file.path).toBe("/paths/notes/a/b.md")
    expect((await read(lab.id, "/paths/notes/a/b.md")).content).toBe("b")
    expect((await read(lab.id, "//paths/./notes/x/../a//b.md")).path).toBe("/paths/notes/a/b.md")

    const climbed = await created(lab.id, "/paths/a/../b.md", "climbed")
    expect(climbed.path).toBe("/paths/b.md")
    await expectError(await get({ labId: lab.id, path: "/paths/a/b.md" }), 404, "not_found")

    // one file, whichever spelling wrote it
    const again = await data(await post({ labId: lab.id, path: "/paths/./notes/a/b.md", content: "b2" }), WireFile, 200)
    expect(again.path).toBe("/paths/notes/a/b.md")
    await data(await del({ labId: lab.id, path: "/paths//notes/a/b.md" }), DeletedFile)
    await expectError(await get({ labId: lab.id, path: "/paths/notes/a/b.md" }), 404, "not_found")
  })

  it("keeps unicode paths as written", async () => {
    const file = await created(lab.id, "/研究/ノート 1.md", "unicode")
    expect(file.path).toBe("/研究/ノート 1.md")
    expect((await read(lab.id, "/研究/ノート 1.md")).content).toBe("unicode")
  })

  const invalid: ReadonlyArray<readonly [string, string]> = [
    ["not starting with /", "notes/a.md"],
    ["escaping the root", "/../x"],
    ["escaping the root later", "/a/../../x"],
    ["containing NUL", "/a\0b.md"],
    ["containing a backslash", "/a\\b.md"],
    ["empty", ""],
    ["the root", "/"],
    ["with a trailing /", "/notes/"],
    ["over 1,024 characters", `/${"a".repeat(1024)}`],
    ["inside .git", "/.git/config"],
    ["inside .git in another case", "/.GIT/config"]
  ]

  it.each(invalid)("refuses a path %s with 422 naming path, on every method", async (_, path) => {
    expect(await expectError(await post({ labId: lab.id, path, content: "x" }), 422, "validation_error")).toMatch(/path/)
    expect(await expectError(await patch({ labId: lab.id, path, content: "x" }), 422, "validation_error")).toMatch(/path/)
    expect(await expectError(await get({ labId: lab.id, path }), 422, "validation_error")).toMatch(/path/)
    expect(await expectError(await del({ labId: lab.id, path }), 422, "validation_error")).toMatch(/path/)
  })

  it("accepts a path of exactly 1,024 characters", async () => {
    const path = `/${"p".repeat(1023)}`
    expect((await created(lab.id, path, "long")).path).toBe(path)
  })

  it("refuses a path that is not a string", async () => {
    expect(await expectError(await post({ labId: lab.id, path: 42, content: "x" }), 422, "validation_error")).toMatch(/path/)
  })
})

describe("content", () => {
  it(`accepts exactly ${MiB} bytes and refuses ${MiB + 1}`, async () => {
    const exact = "x".repeat(MiB)
    const file = await created(lab.id, "/big/exact.txt", exact)
    expect(file.size).toBe(MiB)
    expect(file.sha).toBe(await gitHashObject(exact))
    expect((await read(lab.id, "/big/exact.txt")).content).toBe(exact)

    const response = await post({ labId: lab.id, path: "/big/over.txt", content: `${exact}x` })
    expect([413, 422]).toContain(response.status)
    const message = await expectError(response, response.status, response.status === 413 ? "payload_too_large" : "validation_error")
    if (response.status === 422) expect(message).toMatch(/content/)
    await expectError(await get({ labId: lab.id, path: "/big/over.txt" }), 404, "not_found")
  })

  it("counts multi-byte UTF-8 in bytes, not characters", async () => {
    const euros = "€".repeat((MiB - 1) / 3) // 3 bytes each: 1,048,575 bytes
    expect(Buffer.byteLength(`${euros}a`)).toBe(MiB)
    expect((await created(lab.id, "/big/euros.txt", `${euros}a`)).size).toBe(MiB)
    await expectError(await post({ labId: lab.id, path: "/big/euros-over.txt", content: `${euros}ab` }), 422, "validation_error")

    const emoji = "😀".repeat(MiB / 4) // 4 bytes, but 2 UTF-16 units, each: 524,288 JavaScript characters
    expect(emoji.length).toBeLessThan(MiB)
    const file = await created(lab.id, "/big/emoji.txt", emoji)
    expect(file.size).toBe(MiB)
    expect(file.sha).toBe(await gitHashObject(emoji))
    const over = await post({ labId: lab.id, path: "/big/emoji-over.txt", content: `${emoji}a` })
    expect(await expectError(over, 422, "validation_error")).toMatch(/content/)
    await expectError(await get({ labId: lab.id, path: "/big/emoji-over.txt" }), 404, "not_found")
  })

  it("applies the same limit to PATCH, leaving the file as it was", async () => {
    await created(lab.id, "/big/patched.txt", "small")
    await expectError(await patch({ labId: lab.id, path: "/big/patched.txt", content: "é".repeat(MiB / 2 + 1) }), 422, "validation_error")
    expect((await read(lab.id, "/big/patched.txt")).content).toBe("small")
  })

  it("refuses a NUL in the content with 422 naming content", async () => {
    const response = await post({ labId: lab.id, path: "/nul.txt", content: "before\0after" })
    expect(await expectError(response, 422, "validation_error")).toMatch(/content/)
    await expectError(await get({ labId: lab.id, path: "/nul.txt" }), 404, "not_found")
  })

  it("refuses a missing or non-string content with 422 naming content", async () => {
    expect(await expectError(await post({ labId: lab.id, path: "/c.md" }), 422, "validation_error")).toMatch(/content/)
    expect(await expectError(await post({ labId: lab.id, path: "/c.md", content: null }), 422, "validation_error")).toMatch(/content/)
    expect(await expectError(await post({ labId: lab.id, path: "/c.md", content: ["x"] }), 422, "validation_error")).toMatch(/content/)
  })

  it("refuses unknown body fields with 422 naming them, and writes nothing", async () => {
    const typo = await post({ labId: lab.id, path: "/typo.md", content: "x", contnet: "y" })
    expect(await expectError(typo, 422, "validation_error")).toMatch(/contnet/)
    const onPatch = await patch({ labId: lab.id, path: "/typo.md", content: "x", mode: "append" })
    expect(await expectError(onPatch, 422, "validation_error")).toMatch(/mode/)
    await expectError(await get({ labId: lab.id, path: "/typo.md" }), 404, "not_found")
  })

  it("refuses a missing labId with 422", async () => {
    expect(await expectError(await post({ path: "/x.md", content: "x" }), 422, "validation_error")).toMatch(/labId/)
  })
})

describe("optimistic concurrency (sha)", () => {
  it("writes with the current sha; refuses a stale one with 409 conflict, leaving the content", async () => {
    const v1 = await created(lab.id, "/occ/a.md", "v1")
    const v2 = await data(await post({ labId: lab.id, path: "/occ/a.md", content: "v2", sha: v1.sha }), WireFile)
    expect(v2.content).toBe("v2")

    // someone else read v1 and writes on top of it
    await expectError(await post({ labId: lab.id, path: "/occ/a.md", content: "lost update", sha: v1.sha }), 409, "conflict")
    await expectError(await patch({ labId: lab.id, path: "/occ/a.md", content: "lost update", sha: v1.sha }), 409, "conflict")
    expect(await read(lab.id, "/occ/a.md")).toMatchObject({ content: "v2", sha: v2.sha })

    const v3 = await data(await patch({ labId: lab.id, path: "/occ/a.md", content: "v3", sha: v2.sha }), WireFile)
    expect(v3).toMatchObject({ content: "v3", sha: await gitHashObject("v3") })
  })

  it("refuses DELETE with a stale sha (409), keeping the file; deletes with the current one", async () => {
    const v1 = await created(lab.id, "/occ/b.md", "v1")
    const v2 = await data(await post({ labId: lab.id, path: "/occ/b.md", content: "v2" }), WireFile)
    await expectError(await del({ labId: lab.id, path: "/occ/b.md", sha: v1.sha }), 409, "conflict")
    expect((await read(lab.id, "/occ/b.md")).content).toBe("v2")
    await data(await del({ labId: lab.id, path: "/occ/b.md", sha: v2.sha }), DeletedFile)
    await expectError(await get({ labId: lab.id, path: "/occ/b.md" }), 404, "not_found")
  })

  it("refuses a sha for a file that does not exist (409) instead of creating it", async () => {
    await expectError(await post({ labId: lab.id, path: "/occ/new.md", content: "x", sha: "a".repeat(40) }), 409, "conflict")
    await expectError(await get({ labId: lab.id, path: "/occ/new.md" }), 404, "not_found")
  })

  it("refuses a malformed sha with 422 naming sha", async () => {
    await created(lab.id, "/occ/c.md", "c")
    expect(await expectError(await post({ labId: lab.id, path: "/occ/c.md", content: "x", sha: "abc" }), 422, "validation_error")).toMatch(/sha/)
    expect(await expectError(await del({ labId: lab.id, path: "/occ/c.md", sha: "Z".repeat(40) }), 422, "validation_error")).toMatch(/sha/)
    expect((await read(lab.id, "/occ/c.md")).content).toBe("c")
  })
})

describe("a path is either a file or a directory", () => {
  it("a file /a blocks /a/b (409), and /x/y blocks /x (409)", async () => {
    await created(lab.id, "/tree/a", "a file")
    await expectError(await post({ labId: lab.id, path: "/tree/a/b", content: "x" }), 409, "conflict")
    await expectError(await post({ labId: lab.id, path: "/tree/a/b/c/d.md", content: "x" }), 409, "conflict")

    await created(lab.id, "/tree/x/y/z.md", "deep")
    await expectError(await post({ labId: lab.id, path: "/tree/x", content: "x" }), 409, "conflict")
    await expectError(await post({ labId: lab.id, path: "/tree/x/y", content: "x" }), 409, "conflict")

    await expectError(await get({ labId: lab.id, path: "/tree/a/b" }), 404, "not_found")
    await expectError(await get({ labId: lab.id, path: "/tree/x" }), 404, "not_found")
    // siblings that merely share a prefix are fine
    await created(lab.id, "/tree/ab", "sibling")
    await created(lab.id, "/tree/x.md", "sibling")
  })

  it("frees the name once the blocking file is deleted", async () => {
    await created(lab.id, "/tree2/a", "a file")
    await data(await del({ labId: lab.id, path: "/tree2/a" }), DeletedFile)
    expect((await created(lab.id, "/tree2/a/b", "now a directory")).path).toBe("/tree2/a/b")
  })
})

describe("listing (GET without path)", () => {
  let listed: Lab
  const paths = [
    "/notes/b.md",
    "/README.md",
    "/notes/sub/c.md",
    "/notes.md",
    "/a.md",
    "/notes2/x.md",
    "/notes/a.md",
    "/a-b.md",
    "/a/x.md",
    "/Z.md",
    "/研究.md",
    "/émoji.md"
  ]
  const sorted = [...paths].sort(byBytes)

  beforeAll(async () => {
    listed = await createLab("files-listing")
    for (const path of paths) await created(listed.id, path, `content of ${path}`)
  })

  it("lists every file in path order, without content", async () => {
    const result = await page(await get({ labId: listed.id, limit: 100 }), WireSummary)
    expect(result.data.map((f) => f.path)).toEqual(sorted)
    expect(result.meta).toMatchObject({ next_cursor: null, has_more: false })
    for (const file of result.data) {
      expect(file).toMatchObject({ labId: listed.id, source: "api", size: Buffer.byteLength(`content of ${file.path}`) })
      expect(file.sha).toBe(await gitHashObject(`content of ${file.path}`))
    }
    const raw = await json(await get({ labId: listed.id, limit: 1 }))
    expect(raw).toMatchObject({ data: [{ path: sorted[0] }] })
    expect(JSON.stringify(raw)).not.toContain("content of")
  })

  it("lists a directory: /notes and /notes/ alike, and not /notes.md or /notes2/", async () => {
    const expected = ["/notes/a.md", "/notes/b.md", "/notes/sub/c.md"]
    for (const prefix of ["/notes", "/notes/", "/notes//", "//notes"]) {
      const result = await page(await get({ labId: listed.id, prefix }), WireSummary)
      expect(result.data.map((f) => f.path), prefix).toEqual(expected)
    }
    const sub = await page(await get({ labId: listed.id, prefix: "/notes/sub" }), WireSummary)
    expect(sub.data.map((f) => f.path)).toEqual(["/notes/sub/c.md"])
    const root = await page(await get({ labId: listed.id, prefix: "/", limit: 100 }), WireSummary)
    expect(root.data.map((f) => f.path)).toEqual(sorted)
  })

  it("lists nothing below a directory that does not exist", async () => {
    const result = await page(await get({ labId: listed.id, prefix: "/nothing" }), WireSummary)
    expect(result).toMatchObject({ data: [], meta: { next_cursor: null, has_more: false } })
    // /notes/b.md is a file, not a directory
    expect((await page(await get({ labId: listed.id, prefix: "/notes/b.md" }), WireSummary)).data).toEqual([])
  })

  it("walks several pages with no repeats and no gaps", async () => {
    for (const limit of [1, 3, 5, 12]) {
      const pages = await walk(listed.id, limit)
      expect(pages.flat(), `limit ${limit}`).toEqual(sorted)
      expect(new Set(pages.flat()).size).toBe(sorted.length)
      expect(pages.length, `limit ${limit}`).toBe(Math.ceil(sorted.length / limit))
      for (const p of pages) expect(p.length).toBeLessThanOrEqual(limit)
    }
    const below = await walk(listed.id, 2, "/notes")
    expect(below).toEqual([["/notes/a.md", "/notes/b.md"], ["/notes/sub/c.md"]])
  })

  it("defaults to 20 per page", async () => {
    const many = await createLab("files-many")
    const names = Array.from({ length: 25 }, (_, i) => `/f${String(i).padStart(2, "0")}.md`)
    for (const path of names) await created(many.id, path, path)
    const first = await page(await get({ labId: many.id }), WireSummary)
    expect(first.data.map((f) => f.path)).toEqual(names.slice(0, 20))
    expect(first.meta.has_more).toBe(true)
    const second = await page(await get({ labId: many.id, cursor: first.meta.next_cursor ?? undefined }), WireSummary)
    expect(second.data.map((f) => f.path)).toEqual(names.slice(20))
    expect(second.meta).toMatchObject({ has_more: false, next_cursor: null })
  })

  it("refuses limit over 100 or under 1, and a cursor it did not issue, with 422", async () => {
    expect(await expectError(await get({ labId: listed.id, limit: 101 }), 422, "validation_error")).toMatch(/limit/)
    expect(await expectError(await get({ labId: listed.id, limit: 0 }), 422, "validation_error")).toMatch(/limit/)
    expect(await expectError(await get({ labId: listed.id, limit: "ten" }), 422, "validation_error")).toMatch(/limit/)
    expect(await expectError(await get({ labId: listed.id, cursor: "not-a-cursor" }), 422, "validation_error")).toMatch(/cursor/)
    expect(await expectError(await get({ labId: listed.id, cursor: Buffer.from("{}").toString("base64url") }), 422, "validation_error")).toMatch(
      /cursor/
    )

    // a cursor of another list (tasks) is not a files cursor
    for (const title of ["one", "two"]) await data(await server.request("POST", "/api/v1/tasks", { token: server.adminKey, json: { labId: listed.id, title } }), Task, 201)
    const tasks = await page(await server.request("GET", `/api/v1/tasks?labId=${listed.id}&limit=1`, { token: server.adminKey }), Task)
    expect(tasks.meta.next_cursor).not.toBeNull()
    expect(await expectError(await get({ labId: listed.id, cursor: tasks.meta.next_cursor ?? undefined }), 422, "validation_error")).toMatch(/cursor/)
  })

  it("refuses a prefix that escapes the root with 422 naming prefix", async () => {
    expect(await expectError(await get({ labId: listed.id, prefix: "/../x" }), 422, "validation_error")).toMatch(/prefix/)
    expect(await expectError(await get({ labId: listed.id, prefix: "notes" }), 422, "validation_error")).toMatch(/prefix/)
  })

  it("keeps each lab's files apart", async () => {
    const result = await page(await get({ labId: other.id, limit: 100 }), WireSummary)
    expect(result.data.map((f) => f.path)).not.toContain("/notes/a.md")
  })
})

describe("scopes", () => {
  beforeAll(async () => {
    await created(lab.id, "/scoped.md", "original")
  })

  it("lets a lab:<slug>:r key read and list", async () => {
    expect((await data(await get({ labId: lab.slug, path: "/scoped.md" }, readerKey), WireFile)).content).toBe("original")
    const listing = await page(await get({ labId: lab.id, prefix: "/", limit: 100 }, readerKey), WireSummary)
    expect(listing.data.map((f) => f.path)).toContain("/scoped.md")
  })

  it("refuses a lab:<slug>:r key every write with 403 forbidden", async () => {
    await expectError(await post({ labId: lab.id, path: "/scoped.md", content: "hacked" }, readerKey), 403, "forbidden")
    await expectError(await post({ labId: lab.id, path: "/new-by-reader.md", content: "x" }, readerKey), 403, "forbidden")
    await expectError(await patch({ labId: lab.id, path: "/scoped.md", content: "hacked" }, readerKey), 403, "forbidden")
    await expectError(await del({ labId: lab.id, path: "/scoped.md" }, readerKey), 403, "forbidden")
    expect((await read(lab.id, "/scoped.md")).content).toBe("original")
    await expectError(await get({ labId: lab.id, path: "/new-by-reader.md" }), 404, "not_found")
  })

  it("lets a lab:<slug>:rw key write", async () => {
    const file = await data(await post({ labId: lab.slug, path: "/by-writer.md", content: "w" }, writerKey), WireFile, 201)
    expect(file.labId).toBe(lab.id)
    await data(await del({ labId: lab.slug, path: "/by-writer.md" }, writerKey), DeletedFile)
  })

  it("refuses another lab's key with 403, whether the file or the lab exists or not", async () => {
    await expectError(await get({ labId: lab.id, path: "/scoped.md" }, otherKey), 403, "forbidden")
    await expectError(await get({ labId: lab.id, path: "/missing.md" }, otherKey), 403, "forbidden")
    await expectError(await get({ labId: lab.slug }, otherKey), 403, "forbidden")
    await expectError(await post({ labId: lab.id, path: "/scoped.md", content: "x" }, otherKey), 403, "forbidden")
    await expectError(await patch({ labId: lab.id, path: "/scoped.md", content: "x" }, otherKey), 403, "forbidden")
    await expectError(await del({ labId: lab.id, path: "/scoped.md" }, otherKey), 403, "forbidden")
    await expectError(await get({ labId: "no-such-lab", path: "/scoped.md" }, otherKey), 403, "forbidden")
    expect((await read(lab.id, "/scoped.md")).content).toBe("original")
  })

  it("refuses requests without credentials with 401", async () => {
    await expectError(await server.request("GET", query({ labId: lab.id, path: "/scoped.md" })), 401, "unauthorized")
    await expectError(await server.request("POST", "/api/v1/files", { json: { labId: lab.id, path: "/x.md", content: "x" } }), 401, "unauthorized")
  })
})

describe("the typed client", () => {
  it("writes, reads, updates, lists and deletes a file", async () => {
    const client = await server.client(writerKey)
    const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

    const written = await run(client.files.write({ payload: { labId: lab.slug, path: "/client//typed.md", content: "from the client ✓" } }))
    expect(written.data).toMatchObject({ labId: lab.id, path: "/client/typed.md", content: "from the client ✓", source: "api" })
    expect(written.data.sha).toBe(await gitHashObject("from the client ✓"))
    expect(written.data.updatedAt).toBeInstanceOf(Date)

    const read = await run(client.files.read({ urlParams: { labId: lab.id, path: "/client/typed.md" } }))
    const file = read.data
    if (!Schema.is(Schema.Struct({ content: Schema.String }))(file)) throw new Error(`expected a file, got ${JSON.stringify(file)}`)
    expect(file.content).toBe("from the client ✓")

    const updated = await run(client.files.update({ payload: { labId: lab.id, path: "/client/typed.md", content: "v2", sha: written.data.sha } }))
    expect(updated.data.content).toBe("v2")

    const listing = await run(client.files.read({ urlParams: { labId: lab.id, prefix: "/client" } }))
    const isList = Schema.is(Schema.Array(Schema.Struct({ path: Schema.String })))
    expect(isList(listing.data) ? listing.data.map((f) => f.path) : "not a list").toEqual(["/client/typed.md"])

    const stale = await run(Effect.either(client.files.write({ payload: { labId: lab.id, path: "/client/typed.md", content: "x", sha: written.data.sha } })))
    expect(Either.isLeft(stale) ? stale.left._tag : "succeeded").toBe("Conflict")

    const deleted = await run(client.files.delete({ urlParams: { labId: lab.id, path: "/client/typed.md" } }))
    expect(deleted.data).toEqual({ labId: lab.id, path: "/client/typed.md", sha: updated.data.sha, deleted: true })

    const missing = await run(Effect.either(client.files.read({ urlParams: { labId: lab.id, path: "/client/typed.md" } })))
    expect(Either.isLeft(missing) ? missing.left._tag : "succeeded").toBe("NotFound")
  })
})
