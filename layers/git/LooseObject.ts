import { inflateSync } from "node:zlib"
import { inflatePrefix } from "./Inflate.js"
import { type ObjectType, PackError } from "./PackFormat.js"
import type { ObjectInfo } from "./PackReader.js"
import { bufferAccess } from "./RandomAccess.js"

const LOOSE_TYPES: Readonly<Record<string, ObjectType>> = { commit: "commit", tree: "tree", blob: "blob", tag: "tag" }

/** A loose object's file (deflated `<type> <size>\0<content>`) read: its content only when within `maxBytes`. */
export const looseObject = (raw: Buffer, oid: string, maxBytes: number): ObjectInfo => {
  const head = inflatePrefix(bufferAccess(raw), 0, 64)
  const nul = head.indexOf(0)
  const match = /^(commit|tree|blob|tag) (\d+)$/.exec(head.subarray(0, Math.max(0, nul)).toString("latin1"))
  const type = LOOSE_TYPES[match?.[1] ?? ""]
  if (nul === -1 || !match?.[2] || type === undefined) throw new PackError(`loose object ${oid} has no valid header`)
  const size = Number(match[2])
  if (size > maxBytes) return { type, size, content: undefined }
  const content = inflateSync(raw, { maxOutputLength: nul + 1 + size }).subarray(nul + 1)
  if (content.length !== size) throw new PackError(`loose object ${oid} is damaged`)
  return { type, size, content }
}

