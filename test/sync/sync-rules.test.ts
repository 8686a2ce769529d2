/**
 * Pulls against a real git server: the sync rules of spec 4.4, exact SyncResult
 * counts, deletions, subPath pulls and the activity feed, all checked through
 * the HTTP API as a user would.
 */
import { mkdir, rm, symlink, chmod } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { GitServer } from "../support/GitServer.js"
import type { TestServer } from "../support/TestServer.js"
import { deliver, pushDelivery, put, userOf, type User } from "../support/SyncSupport.js"
import { linkedLab as linkedLabOn, useSyncServer } from "../support/SyncServer.js"

let git: GitServer
let server: TestServer
let user: User

useSyncServer("lab-sync-rules-", (stage) => {
  ;({ git, server } = stage)
  user = userOf(server, server.adminKey)
})

/** A repository `owner/name` with a first commit, and a lab linked to it and synced. */
const linkedLab = (slug: string, fullName: string, first: Record<string, string>, autoPushOnEdit = false) =>
  linkedLabOn(git, user, { slug, name: fullName, files: first, autoPushOnEdit })

const MiB = 1_048_576
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01])
const NOTEBOOK = `${JSON.stringify({ cells: [{ cell_type: "markdown", metadata: {}, source: ["# Results"] }], metadata: {}, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`

describe("sync rules (spec 4.4) against a real git server", { timeout: 90_000 }, () => {
  it("takes exactly the text files the rules allow, with exact counts", async () => {
    const { wc, labId, c0 } = await linkedLab("rules", "acme/rules", { "README.md": "hello\n" })
    expect(await user.paths(labId)).toEqual(["/README.md"])

    // text files, by extension and by content
    const synced: Record<string, string> = {
      "notes/a.md": "# A\n",
      "code/b.py": "print('b')\n",
      "nb/c.ipynb": NOTEBOOK,
      "paper/d.tex": "\\documentclass{article}\n",
      "data/e.csv": "x,y\n1,2\n",
      "data/f.json": '{"k": 1}\n',
      "src/g.ts": "export const g = 1\n",
      "big/exact.txt": `${"a".repeat(MiB - 1)}\n`, // exactly 1,048,576 bytes
      "notes/ünïcode.md": "naïve café\n",
      // near misses of the skip rules
      "rebuild/r.md": "not build/\n",
      "scripts/build": "#!/bin/sh\necho a file named build\n",
      "notes/min.js": "not *.min.js\n",
      "package.json": '{"name": "x"}\n',
      "packages/x/index.ts": "export {}\n"
    }
    for (const [path, content] of Object.entries(synced)) await put(wc.dir, path, content)

    const skippedByContent: Record<string, string | Uint8Array> = {
      "big/over.txt": `${"a".repeat(MiB)}\n`, // 1,048,577 bytes
      "bin/nul.txt": "abc\0def\n",
      "bin/late-nul.txt": `${"a".repeat(9_000)}\0b\n`, // past git's 8,000 bytes, still not storable text
      "img/logo.md": PNG,
      "bin/bad-utf8.txt": Uint8Array.from([0x61, 0xc3, 0x28, 0x62, 0x0a]),
      "bin/latin1.csv": Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a])
    }
    const skippedByPath = [
      "node_modules/a.js",
      "packages/x/node_modules/y.js",
      ".next/cache.json",
      "app/.next/page.js",
      "dist/bundle.js",
      "lib/dist/b.js",
      "web/build/index.html",
      "docs/build/out.md",
      "package-lock.json",
      "web/yarn.lock",
      "pnpm-lock.yaml",
      "packages/x/package-lock.json",
      "web/app.min.js",
      "web/css/site.min.css"
    ]
    for (const [path, content] of Object.entries(skippedByContent)) await put(wc.dir, path, content)
    for (const path of skippedByPath) await put(wc.dir, path, `// ${path}\n`)
    await symlink("notes/a.md", join(wc.dir, "link.md"))
    await wc.git("add", "-A")
    // a submodule: a gitlink entry (mode 160000) pointing at a commit
    await wc.git("update-index", "--add", "--cacheinfo", `160000,${c0},vendor/lib`)
    await wc.git("commit", "--quiet", "-m", "all kinds of entries")
    await wc.git("push", "--quiet", "origin", "HEAD:refs/heads/main")
    const c1 = await wc.git("rev-parse", "HEAD")
    expect(await wc.git("ls-tree", "HEAD", "link.md", "vendor/lib")).toMatch(/^120000 blob \S+\tlink\.md\n160000 commit \S+\tvendor\/lib$/)

    // no webhook: a forced pull finds the change and answers its exact counts
    const skippedCount = Object.keys(skippedByContent).length + skippedByPath.length + 2 // + symlink + submodule
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 14, updated: 0, skipped: skippedCount, removed: 0, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/README.md", ...Object.keys(synced).map((p) => `/${p}`)].sort())

    for (const [path, content] of Object.entries(synced)) {
      const file = await user.read(labId, `/${path}`)
      expect(file, path).toBeDefined()
      expect(file?.content, path).toBe(content)
      expect(file?.sha, path).toBe(await wc.git("rev-parse", `HEAD:${path}`))
      expect(file?.size, path).toBe(Buffer.byteLength(content))
      expect({ source: file?.source, fromGit: file?.fromGit }, path).toEqual({ source: "git", fromGit: true })
    }
    expect((await user.read(labId, "/big/exact.txt"))?.size).toBe(MiB)
    const status1 = await user.status(labId)
    expect({ lastSyncSha: status1.lastSyncSha, lastError: status1.lastError }).toEqual({ lastSyncSha: c1, lastError: null })

    // the next commit changes every kind of entry
    await put(wc.dir, "notes/a.md", "# A, edited\n") // updated
    await rm(join(wc.dir, "code/b.py")) // removed
    await put(wc.dir, "notes/h.md", "# H\n") // pulled
    await put(wc.dir, "paper/d.tex", `${"%".repeat(MiB)}\n`) // grew past 1 MiB: skipped, and the stale copy removed
    await put(wc.dir, "img/logo.md", "now it is text\n") // was binary, now pulled
    await put(wc.dir, "node_modules/a.js", "// changed\n") // skipped again
    await rm(join(wc.dir, "link.md"))
    await symlink("notes/h.md", join(wc.dir, "link.md")) // a symlink changed: skipped
    await rm(join(wc.dir, "src/g.ts"))
    await put(wc.dir, "dist/g.ts", synced["src/g.ts"] ?? "") // moved into dist/: removed + skipped
    await rm(join(wc.dir, "README.md"))
    await symlink("notes/a.md", join(wc.dir, "README.md")) // a file replaced by a symlink: removed + skipped
    await chmod(join(wc.dir, "nb/c.ipynb"), 0o755) // only the mode changed: nothing to do
    await mkdir(join(wc.dir, "vendor/lib"), { recursive: true }) // keeps the submodule as it is
    const c2 = await wc.commitAndPush("second")
    expect(await wc.git("ls-tree", "HEAD", "nb/c.ipynb", "vendor/lib")).toMatch(/^100755 blob \S+\tnb\/c\.ipynb\n160000 commit/)

    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 2, updated: 1, skipped: 5, removed: 4, sha: c2 })
    const expected = [...Object.keys(synced), "notes/h.md", "img/logo.md"]
      .filter((p) => !["code/b.py", "paper/d.tex", "src/g.ts"].includes(p))
      .map((p) => `/${p}`)
      .sort()
    expect(await user.paths(labId)).toEqual(expected)
    expect((await user.read(labId, "/notes/a.md"))?.content).toBe("# A, edited\n")
    expect((await user.read(labId, "/img/logo.md"))?.content).toBe("now it is text\n")
    expect((await user.read(labId, "/nb/c.ipynb"))?.content).toBe(NOTEBOOK)

    // nothing new: zero counts, same commit
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha: c2 })
    expect(await user.paths(labId)).toEqual(expected)
  })

  // Embedded PGlite decodes every text value with a BOM-stripping TextDecoder, so a file whose content starts
  // with U+FEFF (a "CSV UTF-8" export) reads back without it while `sha` and `size` still count it.
  it.todo("keeps a leading UTF-8 BOM of a pulled file (PGlite strips it when reading text columns)")

  it("follows a file that becomes a directory, and leaves out paths the files API cannot address", async () => {
    const { wc, labId } = await linkedLab("shapes", "acme/shapes", { "notes": "a file named notes\n", "README.md": "hi\n" })
    await rm(join(wc.dir, "notes"))
    await put(wc.dir, "notes/a.md", "now a directory\n")
    // 1,109 characters: git takes it, the files API (at most 1,024) could list it but never read or delete it
    const long = ["d", "e", "f", "g", "h"].map((c) => c.repeat(200)).join("/") + `/${"i".repeat(100)}.md`
    await put(wc.dir, long, "too long a path\n")
    const c1 = await wc.commitAndPush("notes becomes a directory")
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 1, updated: 0, skipped: 1, removed: 1, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/README.md", "/notes/a.md"])

    await rm(join(wc.dir, "notes"), { recursive: true })
    await put(wc.dir, "notes", "a file again\n")
    const c2 = await wc.commitAndPush("and back")
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 1, updated: 0, skipped: 0, removed: 1, sha: c2 })
    expect(await user.paths(labId)).toEqual(["/README.md", "/notes"])
    expect((await user.read(labId, "/notes"))?.content).toBe("a file again\n")
  })

  it("skips the names the lab cannot hold (a backslash, git's aliases of .git) and pulls the rest", async () => {
    // all legal in a tree made on Linux; isomorphic-git refuses to read such trees, the service's own diff lists them
    const odd = ["back\\slash.md", "git~2/inside.md", ".g\u200cit/config", "notes/.GIT./hooks.md"]
    const { wc, labId } = await linkedLab("odd-names", "acme/odd-names", { "README.md": "hi\n" })
    for (const path of odd) await put(wc.dir, path, "an odd name\n")
    await put(wc.dir, "notes/ok.md", "fine\n")
    // git itself refuses .GIT. under NTFS protection (on by default): this repository was made without it
    await wc.git("config", "core.protectNTFS", "false")
    const c1 = await wc.commitAndPush("odd names")
    expect((await wc.git("ls-tree", "-r", "--name-only", "-z", "HEAD")).split("\0").filter((p) => p !== "")).toHaveLength(6)
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 1, updated: 0, skipped: odd.length, removed: 0, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/README.md", "/notes/ok.md"])
    expect((await user.status(labId)).lastError).toBeNull()

    // auto-push commits on top of that tree, and the odd names stay in it as they were
    expect((await user.call("PATCH", "/api/v1/sync", { labId, autoPushOnEdit: true })).status).toBe(200)
    await user.writeOk(labId, "/notes/new.md", "from the API\n")
    expect((await user.pushed(labId)).lastError).toBeNull()
    await wc.pull()
    const tree = (await wc.git("ls-tree", "-r", "--name-only", "-z", "HEAD")).split("\0").filter((p) => p !== "")
    expect(tree.sort()).toEqual([...odd, "README.md", "notes/new.md", "notes/ok.md"].sort())
  })

  it("deletes files that came from git, never files created through the API", async () => {
    const { wc, labId } = await linkedLab("deletions", "acme/deletions", { "keep.md": "keep\n", "gone.md": "gone\n", "dir/old.md": "old\n" })
    const status = await user.status(labId)
    expect(status.autoPushOnEdit).toBe(false)

    // created through the API while auto-push is off: never reaches git
    await user.writeOk(labId, "/api-only.md", "mine\n")
    await user.writeOk(labId, "/dir/api.md", "mine too\n")
    await user.writeOk(labId, "/shared.md", "written first through the API\n")

    await rm(join(wc.dir, "gone.md"))
    await rm(join(wc.dir, "dir/old.md"))
    await put(wc.dir, "shared.md", "then added in git\n")
    const c1 = await wc.commitAndPush("delete two, add shared")
    expect(await wc.git("ls-tree", "-r", "--name-only", "HEAD")).toBe("keep.md\nshared.md")

    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 0, updated: 1, skipped: 0, removed: 2, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/api-only.md", "/dir/api.md", "/keep.md", "/shared.md"])
    const shared = await user.read(labId, "/shared.md")
    expect({ content: shared?.content, fromGit: shared?.fromGit }).toEqual({ content: "then added in git\n", fromGit: false })

    // deleted in git again: the file was not originally pulled from git, so it stays
    await rm(join(wc.dir, "shared.md"))
    const c2 = await wc.commitAndPush("delete shared")
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha: c2 })
    expect(await user.paths(labId)).toEqual(["/api-only.md", "/dir/api.md", "/keep.md", "/shared.md"])

    // a full reconcile of a subtree (and of the root) keeps them too
    expect(await user.syncNow(labId, "/dir")).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha: c2 })
    expect(await user.syncNow(labId, "/")).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 0, removed: 0, sha: c2 })
    expect(await user.paths(labId)).toEqual(["/api-only.md", "/dir/api.md", "/keep.md", "/shared.md"])
    // and nothing was ever pushed
    expect(await wc.git("ls-remote", "origin", "refs/heads/main")).toMatch(new RegExp(`^${c2}\\s`))
  })

  it("pulls only the subtree named by subPath, the rest at the next full pull", async () => {
    const { wc, labId, c0 } = await linkedLab("subpath", "acme/subpath", {
      "docs/a.md": "a\n",
      "docs/deep/b.md": "b\n",
      "other.md": "other\n"
    })
    await put(wc.dir, "docs/a.md", "a, edited\n")
    await rm(join(wc.dir, "docs/deep/b.md"))
    await put(wc.dir, "docs/deep/c.md", "c\n")
    await put(wc.dir, "docs/node_modules/x.js", "x\n")
    await put(wc.dir, "other.md", "other, edited\n")
    await put(wc.dir, "top.md", "top\n")
    await put(wc.dir, "docs2/z.md", "a sibling whose name starts like docs\n")
    const c1 = await wc.commitAndPush("changes inside and outside docs/")

    expect(await user.syncNow(labId, "/docs")).toEqual({ ok: true, pulled: 1, updated: 1, skipped: 1, removed: 1, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/docs/a.md", "/docs/deep/c.md", "/other.md"])
    expect((await user.read(labId, "/docs/a.md"))?.content).toBe("a, edited\n")
    expect((await user.read(labId, "/other.md"))?.content).toBe("other\n")
    // the rest of the tree is still at the last full sync
    expect((await user.status(labId)).lastSyncSha).toBe(c0)
    // the same subtree again (with a trailing slash): nothing left to do there
    expect(await user.syncNow(labId, "/docs/")).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 1, removed: 0, sha: c1 })

    // a full pull applies what is left
    expect(await user.syncNow(labId)).toEqual({ ok: true, pulled: 2, updated: 1, skipped: 1, removed: 0, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/docs/a.md", "/docs/deep/c.md", "/docs2/z.md", "/other.md", "/top.md"])
    expect((await user.read(labId, "/other.md"))?.content).toBe("other, edited\n")
    expect((await user.status(labId)).lastSyncSha).toBe(c1)

    // the root as subPath is the whole tree: nothing is lost
    expect(await user.syncNow(labId, "/")).toEqual({ ok: true, pulled: 0, updated: 0, skipped: 1, removed: 0, sha: c1 })
    expect(await user.paths(labId)).toEqual(["/docs/a.md", "/docs/deep/c.md", "/docs2/z.md", "/other.md", "/top.md"])
  })

  it("writes one activity entry per sync, with the counts and the short commit id", async () => {
    const { url, wc, labId, c0 } = await linkedLab("feed", "acme/feed", { "README.md": "hello\n" })
    const secret = (await user.secret(labId)).secret ?? ""

    // a webhook pull
    await put(wc.dir, "README.md", "hello again\n")
    await put(wc.dir, "x.md", "x\n")
    const c1 = await wc.commitAndPush("second")
    const hook = await deliver(server, "github", pushDelivery("github", { url, fullName: "acme/feed", branch: "main", before: c0, after: c1 }, secret))
    expect(hook.status).toBe(202)
    await user.syncedTo(labId, c1)

    // a forced pull that removes a file, one that finds nothing, and a subtree pull
    await rm(join(wc.dir, "x.md"))
    const c2 = await wc.commitAndPush("third")
    expect((await user.syncNow(labId)).removed).toBe(1)
    expect((await user.syncNow(labId)).pulled).toBe(0)
    expect((await user.syncNow(labId, "/notes")).sha).toBe(c2)

    const short = async (sha: string) => wc.git("rev-parse", "--short=7", sha)
    const expected = [
      { added: 0, updated: 0, removed: 0, sha: await short(c2) },
      { added: 0, updated: 0, removed: 0, sha: await short(c2) },
      { added: 0, updated: 0, removed: 1, sha: await short(c2) },
      { added: 1, updated: 1, removed: 0, sha: await short(c1) },
      { added: 1, updated: 0, removed: 0, sha: await short(c0) }
    ]
    // walked two entries a page: five entries, newest first, none repeated
    const entries = await user.syncEntries(labId, 2)
    expect(entries.map((e) => e.message)).toEqual(
      expected.map((e) => `Synced acme/feed: ${e.added} added, ${e.updated} updated, ${e.removed} removed (${e.sha})`)
    )
    expect(entries.map((e) => ({ added: e.data.added, updated: e.data.updated, removed: e.data.removed, sha: e.data.sha }))).toEqual(expected)
    expect(new Set(entries.map((e) => e.id)).size).toBe(5)
    expect(entries.every((e) => e.labId === labId)).toBe(true)
    expect((await user.syncEntries(labId, 100)).map((e) => e.id)).toEqual(entries.map((e) => e.id))
  })
})
