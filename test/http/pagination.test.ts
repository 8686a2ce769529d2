import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Lab } from "../../src/labs/Lab.js"
import { Task, type TaskStatus } from "../../src/tasks/Task.js"
import { data, expectError, page } from "../support/http.js"
import { operatorOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

// ---------------------------------------------------------------------------
// helpers

const createLab = (slug: string) => operatorOf(server).createLab(slug, "free")

const createTask = async (labId: string, title: string, status: typeof TaskStatus.Type = "todo") =>
  data(
    await server.request("POST", "/api/v1/tasks", { token: server.adminKey, json: { labId, title, status } }),
    Task,
    201
  )

/** Create `n` tasks one after the other; `status(i)` picks each one's status. */
const createTasks = async (labId: string, n: number, status: (i: number) => typeof TaskStatus.Type = () => "todo") => {
  const tasks: Array<Task> = []
  for (let i = 0; i < n; i++) tasks.push(await createTask(labId, `task ${i}`, status(i)))
  return tasks
}

/** The order lists promise: newest first, ties broken by id, descending. */
const newestFirst = (a: Task, b: Task) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

const ids = (tasks: ReadonlyArray<Task>) => tasks.map((t) => t.id)

const query = (params: Record<string, string>) => new URLSearchParams(params).toString()

const listTasks = async (params: Record<string, string>) =>
  page(await server.request("GET", `/api/v1/tasks?${query(params)}`, { token: server.adminKey }), Task)

/** Follow next_cursor to the end; `between(n)` runs after page n (1-based) is fetched. */
const walk = async (params: Record<string, string>, between: (pageNumber: number) => Promise<void> = async () => {}) => {
  const pages: Array<{ readonly items: ReadonlyArray<Task>; readonly hasMore: boolean; readonly nextCursor: string | null }> = []
  let cursor: string | null = null
  do {
    const result = await listTasks(cursor === null ? params : { ...params, cursor })
    pages.push({ items: result.data, hasMore: result.meta.has_more, nextCursor: result.meta.next_cursor })
    cursor = result.meta.next_cursor
    expect(result.meta.has_more).toBe(cursor !== null)
    await between(pages.length)
    if (pages.length > 50) throw new Error("the walk does not end")
  } while (cursor !== null)
  return pages
}

/** Expect a 422 validation_error whose message names the parameter. */
const expectInvalid = async (params: Record<string, string>, field: string) => {
  const message = await expectError(
    await server.request("GET", `/api/v1/tasks?${query(params)}`, { token: server.adminKey }),
    422,
    "validation_error"
  )
  expect(message).toContain(field)
}

// ---------------------------------------------------------------------------

describe("walking a list", () => {
  let lab: Lab
  let tasks: Array<Task>
  beforeAll(async () => {
    lab = await createLab("walk")
    tasks = await createTasks(lab.id, 45)
  })

  it("returns every task exactly once, newest first, over three pages of 20", async () => {
    const pages = await walk({ labId: lab.id, limit: "20" })
    expect(pages.map((p) => p.items.length)).toEqual([20, 20, 5])
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, false])
    const walked = pages.flatMap((p) => p.items)
    expect(new Set(ids(walked)).size).toBe(walked.length)
    expect(ids(walked)).toEqual(ids([...tasks].sort(newestFirst)))
    // the newest task (the last one created) comes first, the oldest last
    expect(walked[0]?.id).toBe(tasks.at(-1)?.id)
    expect(walked.at(-1)?.id).toBe(tasks[0]?.id)
  })

  it("ends with has_more false and next_cursor null, also when the last page is full", async () => {
    const pages = await walk({ labId: lab.id, limit: "15" })
    expect(pages.map((p) => p.items.length)).toEqual([15, 15, 15])
    expect(pages.at(-1)).toMatchObject({ hasMore: false, nextCursor: null })
    expect(ids(pages.flatMap((p) => p.items))).toEqual(ids([...tasks].sort(newestFirst)))
  })

  it("accepts the slug as labId", async () => {
    const pages = await walk({ labId: lab.slug, limit: "20" })
    expect(pages.flatMap((p) => p.items)).toHaveLength(45)
  })

  it("pages 20 by default", async () => {
    const first = await listTasks({ labId: lab.id })
    expect(ids(first.data)).toEqual(ids([...tasks].sort(newestFirst).slice(0, 20)))
    expect(first.meta.has_more).toBe(true)
    expect(first.meta.next_cursor).not.toBeNull()
    // the cursor of a default-sized page continues where it stopped
    const second = await listTasks({ labId: lab.id, cursor: first.meta.next_cursor ?? "" })
    expect(ids(second.data)).toEqual(ids([...tasks].sort(newestFirst).slice(20, 40)))
  })

  it("allows limit 100: one page with everything, nothing more to fetch", async () => {
    const all = await listTasks({ labId: lab.id, limit: "100" })
    expect(ids(all.data)).toEqual(ids([...tasks].sort(newestFirst)))
    expect(all.meta).toMatchObject({ has_more: false, next_cursor: null })
  })

  it("allows limit 1 and 45 (exactly the count: no further page)", async () => {
    const one = await listTasks({ labId: lab.id, limit: "1" })
    expect(one.data).toHaveLength(1)
    expect(one.meta.has_more).toBe(true)
    const exact = await listTasks({ labId: lab.id, limit: "45" })
    expect(exact.data).toHaveLength(45)
    expect(exact.meta).toMatchObject({ has_more: false, next_cursor: null })
  })

  it("rejects a limit outside 1..100 or not a whole number with 422 naming limit", async () => {
    for (const limit of ["101", "0", "-1", "abc", "1.5", ""]) {
      await expectInvalid({ labId: lab.id, limit }, "limit")
    }
  })

  it("rejects a cursor it did not issue with 422 naming cursor", async () => {
    const notJson = Buffer.from("not json").toString("base64url")
    const wrongShape = Buffer.from(JSON.stringify({ page: 2 })).toString("base64url")
    for (const cursor of ["garbage", "!!!", notJson, wrongShape]) {
      await expectInvalid({ labId: lab.id, cursor }, "cursor")
    }
  })

  it("keeps a lab's list to that lab", async () => {
    const other = await createLab("walk-other")
    const mine = await createTask(other.id, "only here")
    const list = await listTasks({ labId: other.id })
    expect(ids(list.data)).toEqual([mine.id])
    expect(list.meta).toMatchObject({ has_more: false, next_cursor: null })
  })
})

describe("walking while tasks are added", () => {
  it("neither skips nor repeats the tasks that were there when the walk began", async () => {
    const lab = await createLab("walk-inserts")
    const original = await createTasks(lab.id, 45)
    const added: Array<Task> = []

    const pages = await walk({ labId: lab.id, limit: "20" }, async () => {
      for (let i = 0; i < 3; i++) added.push(await createTask(lab.id, `added ${added.length}`))
    })
    const walked = pages.flatMap((p) => p.items)

    expect(new Set(ids(walked)).size).toBe(walked.length)
    const originalIds = new Set(ids(original))
    // every original task once, in order; tasks added after the walk began are newer than the cursor
    expect(ids(walked.filter((t) => originalIds.has(t.id)))).toEqual(ids([...original].sort(newestFirst)))
    expect(walked).toHaveLength(45)
    expect(added.length).toBeGreaterThan(0)

    // a new walk sees them all, the added ones first
    const again = (await walk({ labId: lab.id, limit: "20" })).flatMap((p) => p.items)
    expect(ids(again)).toEqual(ids([...original, ...added].sort(newestFirst)))
    expect(ids(again.slice(0, added.length)).sort()).toEqual(ids(added).sort())
  })

  it("orders tasks created in the same instant by id and pages through them without loss", async () => {
    const lab = await createLab("walk-ties")
    const at = new Date("2024-05-01T12:00:00.000Z")
    const tied = Array.from({ length: 25 }, (_, i) => `task_tie${String(i).padStart(2, "0")}${Math.random().toString(36).slice(2, 8)}`)
    await server.sql((sql) =>
      Effect.forEach(tied, (id) =>
        sql`INSERT INTO tasks (id, lab_id, title, description, status, created_at, updated_at)
            VALUES (${id}, ${lab.id}, ${id}, '', 'todo', ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz)`
      )
    )
    const newer = await createTask(lab.id, "newer")

    const pages = await walk({ labId: lab.id, limit: "10" })
    expect(pages.map((p) => p.items.length)).toEqual([10, 10, 6])
    const walked = ids(pages.flatMap((p) => p.items))
    expect(walked).toEqual([newer.id, ...[...tied].sort().reverse()])
  })
})

describe("filters with pagination", () => {
  it("pages through one status only, and the cursor keeps the filter's place", async () => {
    const lab = await createLab("walk-filter")
    const statuses = ["todo", "done", "in_progress", "done", "cancelled"] as const
    const tasks = await createTasks(lab.id, 40, (i) => statuses[i % statuses.length] ?? "todo")
    const done = tasks.filter((t) => t.status === "done").sort(newestFirst)
    expect(done).toHaveLength(16)

    const pages = await walk({ labId: lab.id, status: "done", limit: "5" })
    expect(pages.map((p) => p.items.length)).toEqual([5, 5, 5, 1])
    const walked = pages.flatMap((p) => p.items)
    expect(walked.every((t) => t.status === "done")).toBe(true)
    expect(ids(walked)).toEqual(ids(done))

    const todo = (await walk({ labId: lab.id, status: "todo", limit: "3" })).flatMap((p) => p.items)
    expect(ids(todo)).toEqual(ids(tasks.filter((t) => t.status === "todo").sort(newestFirst)))

    await expectInvalid({ labId: lab.id, status: "finished" }, "status")
  })
})

describe("the typed client", () => {
  it("walks the same pages as the raw API", async () => {
    const lab = await createLab("walk-client")
    const tasks = await createTasks(lab.id, 45, (i) => (i % 3 === 0 ? "done" : "todo"))
    const client = await server.client(server.adminKey)

    // next_cursor goes back exactly as it came
    const list = (cursor: string | null, status: Option.Option<typeof TaskStatus.Type>) =>
      Effect.runPromise(
        client.tasks.list({
          urlParams: { labId: lab.slug, status: Option.getOrUndefined(status), limit: 20, cursor: cursor ?? undefined }
        })
      )

    const walkClient = async (status: Option.Option<typeof TaskStatus.Type>) => {
      const sizes: Array<number> = []
      const walked: Array<Task> = []
      let cursor: string | null = null
      do {
        const result = await list(cursor, status)
        sizes.push(result.data.length)
        walked.push(...result.data)
        expect(result.meta.has_more).toBe(result.meta.next_cursor !== null)
        expect(result.meta.request_id).toMatch(/^req_/)
        cursor = result.meta.next_cursor
      } while (cursor !== null && sizes.length <= 50)
      return { sizes, walked }
    }

    const all = await walkClient(Option.none())
    expect(all.sizes).toEqual([20, 20, 5])
    expect(ids(all.walked)).toEqual(ids([...tasks].sort(newestFirst)))
    expect(all.walked[0]?.createdAt).toBeInstanceOf(Date)

    const done = await walkClient(Option.some("done"))
    expect(done.sizes).toEqual([15])
    expect(ids(done.walked)).toEqual(ids(tasks.filter((t) => t.status === "done").sort(newestFirst)))
  })
})
