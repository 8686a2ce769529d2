import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm, statfs } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A small file system of its own (tmpfs, mounted as root), filled and freed at will: the full-disk tests' stage. */
export interface SmallDisk {
  readonly dir: string
  /** Bytes free on it, as statfs says (what the service watches). */
  readonly free: () => Promise<number>
  /** Take space until only `leaveBytes` are free (a file of zeros beside the service's data). */
  readonly fillTo: (leaveBytes: number) => Promise<void>
  /** Give the filler's space back. */
  readonly release: () => Promise<void>
  readonly unmount: () => Promise<void>
}

export const MIB = 1024 * 1024

/** Can this process mount a tmpfs (root in a sandbox that allows it)? Asked once, with a throwaway mount. */
export const canMountTmpfs = (() => {
  let answer: boolean | undefined
  return () => {
    if (answer !== undefined) return answer
    const probe = join(tmpdir(), `tmpfs-probe-${randomBytes(4).toString("hex")}`)
    try {
      execFileSync("mkdir", ["-p", probe])
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], { stdio: "ignore" })
      execFileSync("umount", [probe])
      answer = true
    } catch {
      answer = false
    }
    execFileSync("rm", ["-rf", probe])
    return answer
  }
})()

export const mountSmallDisk = async (sizeMib: number): Promise<SmallDisk> => {
  const dir = await mkdtemp(join(tmpdir(), "lab-small-disk-"))
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMib}m`, "tmpfs", dir])
  const fillers: Array<string> = []
  const free = async () => {
    const stats = await statfs(dir)
    return stats.bavail * stats.bsize
  }
  return {
    dir,
    free,
    fillTo: async (leaveBytes) => {
      const take = (await free()) - leaveBytes
      if (take <= 0) return
      const filler = join(dir, `filler-${fillers.length}`)
      fillers.push(filler)
      execFileSync("fallocate", ["-l", String(take), filler])
    },
    release: async () => {
      for (const filler of fillers.splice(0)) await rm(filler, { force: true })
    },
    unmount: async () => {
      execFileSync("umount", ["-l", dir])
      await rm(dir, { recursive: true, force: true })
    }
  }
}
