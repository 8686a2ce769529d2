import { execFile, spawn } from "node:child_process"
import fs from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { indexPack } from "../../layers/git/PackIndexer.js"
import { PackError } from "../../layers/git/PackFormat.js"
import { bufferAccess } from "../../layers/git/RandomAccess.js"

/** The pack indexer (layers/git/PackIndexer.ts) against git's own index-pack. */
const run = promisify(execFile)
let dir: string

const git = async (...args: ReadonlyArray<string>) => (await run("git", ["-C", dir, ...args], { maxBuffer: 64 << 20 })).stdout

/** `git pack-objects` of everything reachable from HEAD: OFS_DELTA entries, or REF_DELTA ones. */
const packOf = (deltas: "ofs" | "ref") =>
  new Promise<Buffer>((resolve, reject) => {
    const child = spawn("git", ["-C", dir, "pack-objects", "--stdout", "--revs", ...(deltas === "ofs" ? ["--delta-base-offset"] : [])])
    const out: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`pack-objects exited ${code}`))))
    child.stdin.end("HEAD\n")
  })

/** The .idx git writes for `pack`. */
const gitIdx = async (pack: Buffer, name: string) => {
  const path = join(dir, `${name}.pack`)
  await writeFile(path, pack)
  await run("git", ["index-pack", path])
  return readFile(join(dir, `${name}.idx`))
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lab-pack-"))
  await git("init", "--quiet")
  // similar files, so the pack holds deltas; one big file
  const paragraph = "A paragraph that repeats across files, so git stores most of them as deltas.\n".repeat(30)
  for (let i = 0; i < 40; i++) {
    fs.mkdirSync(join(dir, `notes/${i % 4}`), { recursive: true })
    fs.writeFileSync(join(dir, `notes/${i % 4}/n${i}.md`), `${paragraph}note ${i}\n`)
  }
  fs.writeFileSync(join(dir, "big.txt"), Array.from({ length: 20_000 }, (_, i) => `line ${i} ${(i * 7919) % 10007}`).join("\n"))
  // blobs over 1 MiB that git stores as deltas: one on the other, and a small one cut from a big one
  const table = Array.from({ length: 120_000 }, (_, i) => `${i},${(i * 7919) % 100_003},${(i * 104_729) % 65_537}`).join("\n")
  fs.mkdirSync(join(dir, "data"), { recursive: true })
  fs.writeFileSync(join(dir, "data/table.csv"), table)
  fs.writeFileSync(join(dir, "data/table-v2.csv"), `${table}\n120000,1,2\n`)
  fs.writeFileSync(join(dir, "data/table-head.csv"), table.slice(0, 400_000))
  await git("add", "-A")
  await git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one")
  fs.writeFileSync(join(dir, "notes/0/n0.md"), `${paragraph}changed\n`)
  await git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "two")
})
afterAll(() => rm(dir, { recursive: true, force: true }))

const LIMITS = { maxObjects: 1_000_000, maxInflatedBytes: 1024 ** 3, keepBytes: 64 * 1024 * 1024 }
const index = (pack: Buffer) => indexPack(bufferAccess(pack), LIMITS, { scratchDir: dir })

describe("pack indexer", () => {
  for (const deltas of ["ofs", "ref"] as const) {
    it(`writes the .idx git writes and resolves every object (${deltas} deltas)`, async () => {
      const pack = await packOf(deltas)
      const expected = await gitIdx(pack, `pack-${deltas}`)
      const verify = await git("verify-pack", "-v", join(dir, `pack-${deltas}.idx`))
      expect(verify).toMatch(/chain length = 1: \d+ objects?/) // there were deltas to resolve
      const indexed = await index(pack)
      expect(indexed.idx.equals(expected)).toBe(true)
      expect(indexed.checksum).toBe(pack.toString("hex", pack.length - 20))
      const ids = (await git("rev-list", "--objects", "--all")).trim().split("\n").map((line) => line.slice(0, 40))
      // object sizes as git reports them (verify-pack gives a delta's own size)
      const sizes = await git("cat-file", "--batch-all-objects", "--batch-check")
      const largeIds = new Set(
        sizes.split("\n").filter((line) => / blob \d+$/.test(line) && Number(line.split(" ")[2]) > 1024 * 1024).map((line) => line.slice(0, 40))
      )
      // every object but the blobs over 1 MiB is handed on in memory; those are named (in the .idx above) but never held
      expect([...indexed.objects.keys()].sort()).toEqual(ids.filter((id) => !largeIds.has(id)).sort())
      for (const path of ["big.txt", "notes/0/n0.md", "notes/3/n7.md", "data/table-head.csv"]) {
        const oid = (await git("rev-parse", `HEAD:${path}`)).trim()
        expect(indexed.objects.get(oid)?.content.toString("utf8")).toBe(await git("cat-file", "blob", oid))
      }
      expect(largeIds.size).toBe(2)
      // one of them is a delta in the pack (its verify-pack line names a base)
      expect(verify.split("\n").some((line) => largeIds.has(line.slice(0, 40)) && line.trim().split(/ +/).length > 5)).toBe(true)
    })
  }

  it("refuses a pack cut short, damaged, or followed by more bytes", async () => {
    const pack = await packOf("ofs")
    await expect(index(pack.subarray(0, pack.length - 1))).rejects.toThrow(PackError)
    await expect(index(Buffer.concat([pack.subarray(0, Math.floor(pack.length / 2)), pack.subarray(pack.length - 20)]))).rejects.toThrow(PackError)
    const damaged = Buffer.from(pack)
    const middle = Math.floor(pack.length / 2)
    damaged.writeUInt8(damaged.readUInt8(middle) ^ 0xff, middle)
    await expect(index(damaged)).rejects.toThrow(PackError)
    await expect(index(Buffer.concat([pack.subarray(0, pack.length - 20), Buffer.from("extra"), pack.subarray(pack.length - 20)]))).rejects.toThrow(PackError)
    await expect(index(Buffer.from("PACX"))).rejects.toThrow(PackError)
  })
})
