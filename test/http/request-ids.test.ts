/**
 * What the URL and the request id tell a caller: request ids are random (successive ones share nothing a caller could
 * count requests by), and query values reach handlers as sent, repeated slashes included, while repeated slashes in
 * the path still mean one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Lab } from "../../src/labs/Lab.js"
import { Task } from "../../src/tasks/Task.js"
import { data, expectError, page } from "../support/http.js"
import { operatorOf } from "../support/LabFixture.js"
import { startTestServer, type TestServer } from "../support/TestServer.js"

let server: TestServer
let lab: Lab
beforeAll(async () => {
  server = await startTestServer()
  lab = await operatorOf(server).createLab("ids-lab")
})
afterAll(() => server.close())

describe("request ids", () => {
  it("are random: 50 successive ones differ from their first characters on and carry 96 bits", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 50; i++) {
      const response = await server.request("GET", "/api/v1/status")
      await response.text()
      ids.push(response.headers.get("x-request-id") ?? "")
    }
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16,}$/)
    // a per-process prefix and a counter share their first characters across requests
    expect(new Set(ids.map((id) => id.slice(4, 8))).size).toBe(50)
  })
})

describe("repeated slashes", () => {
  it("reach the handler as sent in a query value", async () => {
    const message = await expectError(
      await server.request("GET", "/api/v1/tasks?labId=a////b", { token: server.adminKey }),
      404,
      "not_found"
    )
    expect(message).toBe("no lab a////b")
    const prefix = await server.request("GET", `/api/v1/files?labId=${lab.id}&prefix=//a//b//`, { token: server.adminKey })
    expect(prefix.status).toBe(200)
  })

  it("still mean one in the path", async () => {
    const task = await data(
      await server.request("POST", "/api//v1//tasks", { token: server.adminKey, json: { labId: lab.id, title: "t" } }),
      Task,
      201
    )
    const listed = await page(await server.request("GET", `//api//v1///tasks?labId=${lab.id}`, { token: server.adminKey }), Task)
    expect(listed.data.map((t) => t.id)).toEqual([task.id])
    const alias = await page(await server.request("GET", `//v1//tasks//?labId=${lab.slug}`, { token: server.adminKey }), Task)
    expect(alias.data.map((t) => t.id)).toEqual([task.id])
  })
})
