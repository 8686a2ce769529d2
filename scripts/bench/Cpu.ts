import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"

const CLOCK_TICKS = (() => {
  try {
    const n = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())
    return Number.isInteger(n) && n > 0 ? n : 100
  } catch {
    return 100
  }
})()

/**
 * CPU milliseconds used so far by a process and its descendants, from /proc:
 * noise from other processes on the machine does not enter it, unlike
 * throughput. NaN off Linux.
 */
export const treeCpuMs = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // after "pid (comm) ": state is field 3, utime field 14, stime field 15
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    let ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim()
      for (const child of children ? children.split(" ") : []) ms += treeCpuMs(Number(child))
    }
    return ms
  } catch {
    return Number.NaN
  }
}
