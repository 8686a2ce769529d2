import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { IncomingMessage } from "node:http"

/** Request bodies above this are refused with 413 (a 1 MB file, JSON-escaped, fits with room). */
export const MAX_BODY_BYTES = 5 * 1024 * 1024

/** Where git hosts deliver webhooks (spec 6.1). */
export const WEBHOOK_PATH = "/api/webhooks/"

/** Webhook bodies have a tighter limit: a push payload is a few KiB (GitHub caps its own at 25 MB, but lists at most 20 commits). */
export const WEBHOOK_MAX_BODY_BYTES = 1024 * 1024

/** The body limit of the request with this URL. */
export const bodyLimitFor = (url: string | undefined): number =>
  url !== undefined && url.startsWith(WEBHOOK_PATH) ? WEBHOOK_MAX_BODY_BYTES : MAX_BODY_BYTES

/**
 * node:http's request, counting body bytes as they arrive. Past the limit it
 * keeps draining the socket but drops the bytes, so the server can still send
 * a 413 on the same connection instead of resetting it mid-upload, and no more
 * than the limit is ever buffered.
 */
export class LimitedIncomingMessage extends IncomingMessage {
  bodyBytes = 0
  tooLarge = false
  // the URL is known before the first body byte arrives
  private limit: number | undefined

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(chunk, encoding)
    if (chunk instanceof Uint8Array) this.bodyBytes += chunk.byteLength
    this.limit ??= bodyLimitFor(this.url)
    if (this.bodyBytes > this.limit) {
      this.tooLarge = true
      return true
    }
    return super.push(chunk, encoding)
  }
}

/** Did this request's body exceed the limit (known once the body was read)? */
export const bodyTooLarge = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  return incoming instanceof LimitedIncomingMessage && incoming.tooLarge
}
