import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { IncomingMessage } from "node:http"

/** Request bodies above this are refused with 413 (a 1 MB file, JSON-escaped, fits with room). */
export const MAX_BODY_BYTES = 5 * 1024 * 1024

/** Webhook bodies have a tighter limit: a push payload is a few KiB (GitHub caps its own at 25 MB, but lists at most 20 commits). */
export const WEBHOOK_MAX_BODY_BYTES = 1024 * 1024

/**
 * node:http's request, counting body bytes as they arrive. Past its cap it
 * keeps draining the socket but drops the bytes, so the server can still send
 * a 413 on the same connection instead of resetting it mid-upload, and no more
 * than the cap is ever buffered. The cap is MAX_BODY_BYTES unless a route
 * group's steps lower it (src/http/steps/LimitBody.ts).
 */
export class LimitedIncomingMessage extends IncomingMessage {
  bodyBytes = 0
  tooLarge = false
  cap = MAX_BODY_BYTES

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(chunk, encoding)
    if (chunk instanceof Uint8Array) this.bodyBytes += chunk.byteLength
    if (this.bodyBytes > this.cap) {
      this.tooLarge = true
      return true
    }
    return super.push(chunk, encoding)
  }

  /** Lower the cap; bytes that arrived past it already make the body too large. */
  capAt(bytes: number): void {
    this.cap = Math.min(this.cap, bytes)
    if (this.bodyBytes > this.cap) this.tooLarge = true
  }
}

const limitedOf = (request: HttpServerRequest.HttpServerRequest): LimitedIncomingMessage | undefined => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  return incoming instanceof LimitedIncomingMessage ? incoming : undefined
}

/** Read at most `bytes` of this request's body (a server other than node:http's reads as it does). */
export const capBody = (request: HttpServerRequest.HttpServerRequest, bytes: number): void => {
  limitedOf(request)?.capAt(bytes)
}

/** The cap this request's body was cut at (known once the body was read); undefined when it was not cut. */
export const bodyCutAt = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const incoming = limitedOf(request)
  return incoming !== undefined && incoming.tooLarge ? incoming.cap : undefined
}

/** Did this request's body exceed its cap (known once the body was read)? */
export const bodyTooLarge = (request: HttpServerRequest.HttpServerRequest): boolean => bodyCutAt(request) !== undefined
