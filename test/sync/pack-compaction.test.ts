/**
 * A lab's store gains a pack per fetch and per push; compaction keeps it to a few without losing or changing an
 * object: 300 single-write commits, each stored as its own pack as a push stores it, compacted after each as a
 * job does, leave a handful of packs from which every object reads back as it was. Over thousands of pushes of
 * uneven sizes the store keeps O(log n) packs, and its last pushes cost what its first ones did.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { buildCommits, type Change } from "../../layers/git/CommitBuilder.js"
import { COMPACT_FROM_PACKS, compactPacks, geometricChoice } from "../../layers/git/PackCompaction.js"
import { prefixSuffixDelta } from "../../layers/git/DeltaEncode.js"
import { objectId } from "../../layers/git/PackFormat.js"
import { buildIdx } from "../../layers/git/PackIdx.js"
import { openObjectReader } from "../../layers/git/PackReader.js"
import { writePack } from "../../layers/git/PackWriter.js"
import type { Head } from "../../src/sync/Git.js"

const dirs: Array<string> = []
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const packCount = (gitdir: string) => readdirSync(join(gitdir, "objects", "pack")).filter((n) => n.endsWith(".idx")).length
const bareStore = (prefix: string) => {
  const root = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(root)
  const gitdir = join(root, "lab.git")
  execFileSync("git", ["init", "--quiet", "--bare", gitdir])
  return gitdir
}

/** One push's worth of the store: the commit of `change` on `head`, stored as its own pack, as DiskCommits stores it. */
const appendCommit = (gitdir: string, reader: ReturnType<typeof openObjectReader>, head: Head | undefined, change: Change) => {
  const built = buildCommits((oid) => {
    const tree = reader.read(oid)
    return tree?.type === "tree" ? { content: tree.content, depth: reader.deltaDepth(oid) } : undefined
  }, head, [change], (oid) => reader.holds(oid))
  const pack = writePack(built.objects)
  const base = join(gitdir, "objects", "pack", `pack-${pack.checksum.toString("hex")}`)
  writeFileSync(`${base}.pack`, pack.pack)
  writeFileSync(`${base}.idx`, buildIdx(pack.entries, pack.checksum))
  return built
}

/** How many objects the history of `commit` holds, each read back (a missing or damaged one throws). */
const reachable = (gitdir: string, commit: string) => {
  const reader = openObjectReader(gitdir)
  const seen = new Set<string>()
  const queue = [commit]
  for (let oid = queue.pop(); oid !== undefined; oid = queue.pop()) {
    if (seen.has(oid)) continue
    seen.add(oid)
    const object = reader.read(oid)
    if (object === undefined) throw new Error(`${oid} is missing`)
    if (object.type === "commit") {
      for (const match of object.content.toString("latin1").matchAll(/^(?:tree|parent) ([0-9a-f]{40})$/gm)) queue.push(match[1] ?? "")
    } else if (object.type === "tree") {
      for (let at = 0; at < object.content.length; ) {
        const nul = object.content.indexOf(0, at)
        queue.push(object.content.toString("hex", nul + 1, nul + 21))
        at = nul + 21
      }
    }
  }
  reader.close()
  return seen.size
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

describe("pack compaction", () => {
  it("rolls up the smallest packs until the sizes form a progression of factor 2, as git repack --geometric=2", () => {
    expect(geometricChoice([100, 100, 100])).toBe(3)
    expect(geometricChoice([1_000_000, 10, 10])).toBe(2)
    expect(geometricChoice([5, 100])).toBeLessThan(2)
    expect(geometricChoice([5, 9, 27, 1_000])).toBe(3)
    // a pack far smaller than the rest does not hide two of about the same size above it
    expect(geometricChoice([50, 189, 400, 1_000, 1_100])).toBe(5)
    expect(geometricChoice([50, 189, 400, 1_000, 1_100, 100_000])).toBe(5)
    // already a progression: nothing to do
    expect(geometricChoice([10, 25, 60, 130, 300])).toBeLessThan(2)
  })

  it("reads a delta shorter than 32 bytes followed by more entries (a tree that changed by one id)", () => {
    const root = mkdtempSync(join(tmpdir(), "lab-tiny-delta-"))
    dirs.push(root)
    const gitdir = join(root, "lab.git")
    execFileSync("git", ["init", "--quiet", "--bare", gitdir])
    const base = Buffer.from("a".repeat(100) + "b".repeat(100))
    const target = Buffer.from("a".repeat(100) + "c" + "b".repeat(99))
    const delta = prefixSuffixDelta(base, target)
    const after = randomBytes(100_000)
    expect(delta?.length).toBeLessThan(32)
    const baseId = objectId("blob", base)
    const pack = writePack([
      { kind: "whole", id: baseId, type: "blob", content: base },
      { kind: "delta", id: objectId("blob", target), baseId, delta: delta ?? Buffer.alloc(0) },
      // incompressible bytes after it: a reader that keeps asking for more input finds no end
      { kind: "whole", id: objectId("blob", after), type: "blob", content: after }
    ])
    const file = join(gitdir, "objects", "pack", `pack-${pack.checksum.toString("hex")}`)
    writeFileSync(`${file}.pack`, pack.pack)
    writeFileSync(`${file}.idx`, buildIdx(pack.entries, pack.checksum))
    const reader = openObjectReader(gitdir)
    expect(reader.read(objectId("blob", target))?.content.toString()).toBe(target.toString())
    expect(reader.readBounded(objectId("blob", target), 10)?.size).toBe(200)
    reader.close()
  })

  it("keeps a store written to 300 times to a few packs, every object readable as it was", async () => {
    const gitdir = bareStore("lab-compact-")
    const reader = openObjectReader(gitdir)
    const written = new Map<string, Buffer>()
    let head: Head | undefined
    let most = 0
    for (let i = 0; i < 300; i++) {
      const change: Change = {
        path: `notes/${i % 40}/n${i}.md`,
        content: Buffer.from(`note ${i}\n`.repeat(1 + (i % 7))),
        message: `Update ${i}\n`,
        authorName: "Lab Service",
        authorEmail: "lab-service@users.noreply.local",
        time: 1_700_000_000 + i
      }
      const built = appendCommit(gitdir, reader, head, change)
      head = built.heads.at(-1)
      for (const object of built.objects) {
        const read = reader.read(object.id)
        expect(read, object.id).toBeDefined()
        if (read) written.set(object.id, read.content)
      }
      most = Math.max(most, packCount(gitdir))
      await compactPacks(gitdir, () => reader.close())
    }
    expect(most).toBeLessThanOrEqual(COMPACT_FROM_PACKS)
    expect(packCount(gitdir)).toBeLessThan(COMPACT_FROM_PACKS)
    const fresh = openObjectReader(gitdir)
    for (const [id, content] of written) expect(fresh.read(id)?.content.equals(content), id).toBe(true)
    // git agrees that the newest commit's whole history is there
    expect(written.has(head?.commit ?? "")).toBe(true)
    fresh.close()
    reader.close()
  })

  it("keeps a store pushed to 3,000 times with uneven sizes to O(log n) packs, its last pushes as fast as its first", { timeout: 120_000 }, async () => {
    const gitdir = bareStore("lab-geometric-")
    const reader = openObjectReader(gitdir)
    // a deterministic spread of sizes: deletes and one-line notes (a few hundred bytes a pack) among pages of up to 16 KiB
    let seed = 21
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31)
    const PUSHES = 3_000
    const BATCH = 300
    const millis: Array<number> = []
    const bound = (n: number) => 2 * Math.ceil(Math.log2(n + 1)) + COMPACT_FROM_PACKS
    let head: Head | undefined
    for (let i = 0; i < PUSHES; i++) {
      const started = performance.now()
      // as each push job does: the store is compacted before the job's fetch, then the commit stored as its pack
      await compactPacks(gitdir, () => reader.close())
      const roll = next() % 10
      const path = `notes/${i % 20}/n${next() % 200}.md`
      const content = roll === 0 ? null : roll < 5 ? Buffer.from(`note ${i}\n`) : randomBytes(200 + (next() % 16_000))
      const built = appendCommit(gitdir, reader, head, {
        path,
        content,
        message: `Update ${i}\n`,
        authorName: "Lab Service",
        authorEmail: "lab-service@users.noreply.local",
        time: 1_700_000_000 + i
      })
      head = built.heads.at(-1) ?? head
      millis.push(performance.now() - started)
      const count = packCount(gitdir)
      // the first time the store holds more than O(log n) packs is the failure
      if (count > bound(i + 1)) expect(`${count} packs after ${i + 1} pushes`).toBe(`at most ${bound(i + 1)}`)
    }
    // every object of the newest commit's history still reads back (through a fresh reader)
    expect(reachable(gitdir, head?.commit ?? "")).toBeGreaterThan(PUSHES)
    const first = median(millis.slice(BATCH, 2 * BATCH))
    const last = median(millis.slice(-BATCH))
    expect(last, `median push ${first.toFixed(2)} ms early on, ${last.toFixed(2)} ms at the end`).toBeLessThan(2 * first + 0.5)
    reader.close()
  })
})
