/**
 * A lab's store gains a pack per fetch and per push; compaction keeps it to a few without losing or changing an
 * object: 300 single-write commits, each stored as its own pack as a push stores it, compacted after each as a
 * job does, leave a handful of packs from which every object reads back as it was.
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

describe("pack compaction", () => {
  it("merges the smallest packs while each next one is under twice the sum before it", () => {
    expect(geometricChoice([100, 100, 100])).toBe(3)
    expect(geometricChoice([1_000_000, 10, 10])).toBe(2)
    expect(geometricChoice([5, 100])).toBe(1)
    expect(geometricChoice([5, 9, 27, 1_000])).toBe(3)
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
    const root = mkdtempSync(join(tmpdir(), "lab-compact-"))
    dirs.push(root)
    const gitdir = join(root, "lab.git")
    execFileSync("git", ["init", "--quiet", "--bare", gitdir])
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
      const built = buildCommits((oid) => {
        const tree = reader.read(oid)
        return tree?.type === "tree" ? { content: tree.content, depth: reader.deltaDepth(oid) } : undefined
      }, head, [change])
      head = built.heads.at(-1)
      const pack = writePack(built.objects)
      const base = join(gitdir, "objects", "pack", `pack-${pack.checksum.toString("hex")}`)
      writeFileSync(`${base}.pack`, pack.pack)
      writeFileSync(`${base}.idx`, buildIdx(pack.entries, pack.checksum))
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
})
