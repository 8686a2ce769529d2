import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { IncomingMessage } from "node:http"

/** Request bodies above this are refused with 413 (a 1 MB file, JSON-escaped, fits with room). */
export const MAX_BODY_BYTES = 5 * 1024 * 1024

/**
 * node:http's request, counting body bytes as they arrive. Past the limit it
 * keeps draining the socket but drops the bytes, so the server can still send
 * a 413 on the same connection instead of resetting it mid-upload.
 */
export class LimitedIncomingMessage extends IncomingMessage {
  bodyBytes = 0
  tooLarge = false

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(chunk, encoding)
    if (chunk instanceof Uint8Array) this.bodyBytes += chunk.byteLength
    if (this.bodyBytes > MAX_BODY_BYTES) {
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
