/**
 * layers/NodeServer.ts: the port opens before the app is served (the app is
 * built on the server's layer). A request in between waits for the app instead
 * of hanging unanswered, and one after the app stopped gets 503.
 */
import { HttpServer, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { createServer } from "node:http"
import { describe, expect, it } from "vitest"
import * as NodeServer from "../../layers/NodeServer.js"

const urlOf = (address: HttpServer.Address) => {
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return `http://127.0.0.1:${address.port}/hello`
}

describe("the node:http server", () => {
  it("answers a request that came before the app was served, once it is, and 503 after it stopped", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const context = await Effect.runPromise(
        Layer.buildWithScope(NodeServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }, 10_000), scope)
      )
      const server = Context.get(context, HttpServer.HttpServer)
      const url = urlOf(server.address)

      let settled = false
      const early = fetch(url).then(async (response) => {
        settled = true
        return { status: response.status, body: await response.text() }
      })
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(settled).toBe(false)

      const serving = Effect.runSync(Scope.make())
      await Effect.runPromise(Scope.extend(server.serve(HttpServerResponse.text("hi")), serving))
      expect(await early).toEqual({ status: 200, body: "hi" })
      expect(await (await fetch(url)).text()).toBe("hi")

      await Effect.runPromise(Scope.close(serving, Exit.void))
      const late = await fetch(url)
      expect(late.status).toBe(503)
      expect(await late.json()).toEqual({ error: { code: "service_unavailable", message: expect.any(String), status: 503 } })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("answers 503 to a request still waiting when the server closes without ever serving (a start that failed)", async () => {
    const scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(
      Layer.buildWithScope(NodeServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }, 10_000), scope)
    )
    const waiting = fetch(urlOf(Context.get(context, HttpServer.HttpServer).address))
    await new Promise((resolve) => setTimeout(resolve, 200))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const response = await waiting
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ error: { code: "service_unavailable" } })
  })
})
