import { createHash } from "node:crypto"

/** git's blob id of a text: sha1("blob <bytes>\0<content>"). */
export const blobId = (content: string): string => {
  const bytes = Buffer.from(content, "utf8")
  return createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex")
}

export const byteLength = (content: string): number => Buffer.byteLength(content, "utf8")
