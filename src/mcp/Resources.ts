import { Effect, Either, Option, Schema } from "effect"
import { type Principal, labSlugs } from "../auth/Principal.js"
import { type DomainError, InvalidField, NotKnown } from "../common/DomainErrors.js"
import { problemWith } from "../common/TextHygiene.js"
import { cursorFromString } from "../db/Paging.js"
import { ExistingFilePath } from "../files/File.js"
import { Files } from "../files/Files.js"
import { Labs } from "../labs/Labs.js"
import { accessCounted } from "./LabAccess.js"

/** A lab file as an MCP resource: `lab://<slug>/files/<path>` (the path without its leading slash). */
export const FILE_TEMPLATE = "lab://{slug}/files/{+path}"

const PAGE = 100

const uriOf = (slug: string, path: string) => `lab://${slug}/files${path.split("/").map(encodeURIComponent).join("/")}`

const parseUri = (uri: string): Option.Option<{ readonly slug: string; readonly path: string }> => {
  const match = /^lab:\/\/([a-z0-9-]{1,64})\/files(\/.{1,3000})$/.exec(uri)
  if (match === null || match[1] === undefined || match[2] === undefined) return Option.none()
  try {
    return Option.some({ slug: match[1], path: match[2].split("/").map(decodeURIComponent).join("/") })
  } catch {
    return Option.none()
  }
}

const decodePath = Schema.decodeUnknownEither(ExistingFilePath)

const mimeOf = (path: string) => (/\.(md|markdown)$/i.test(path) ? "text/markdown" : "text/plain")

/** Where a listing of the credential's labs' files stopped: the lab (by its place among them) and the last path. */
const ListCursor = cursorFromString(Schema.Struct({ lab: Schema.Int.pipe(Schema.between(0, 10_000)), path: Schema.String }))
const decodeListCursor = Schema.decodeUnknownEither(ListCursor)
const encodeListCursor = Schema.encodeSync(ListCursor)

/** The lab files resources: listed across the labs the credential names, read one at a time. */
export const makeResources = Effect.gen(function* () {
  const labs = yield* Labs
  const files = yield* Files

  /** One page of the files of the credential's labs, lab after lab (the operator's key names none: use the template). */
  const list = (principal: Principal, cursor: string | undefined) =>
    Effect.gen(function* () {
      const slugs = labSlugs(principal)
      const start = cursor === undefined ? Either.right({ lab: 0, path: "" }) : decodeListCursor(cursor)
      if (Either.isLeft(start)) return yield* new InvalidField({ field: "cursor", problem: "is not a cursor issued by this service" })
      const resources: Array<{ uri: string; name: string; mimeType: string; size: number }> = []
      let at = start.right
      while (at.lab < slugs.length && resources.length < PAGE) {
        const slug = slugs[at.lab] ?? ""
        const lab = yield* Effect.either(accessCounted(labs, principal, slug, "read"))
        if (Either.isLeft(lab)) {
          at = { lab: at.lab + 1, path: "" }
          continue
        }
        const after = at.path === "" ? Option.none<string>() : Option.some(at.path)
        const page = yield* files.list(lab.right.id, "/", after, PAGE - resources.length)
        for (const file of page.items) resources.push({ uri: uriOf(slug, file.path), name: file.path, mimeType: mimeOf(file.path), size: file.size })
        at = Option.match(page.next, { onNone: () => ({ lab: at.lab + 1, path: "" }), onSome: (path) => ({ lab: at.lab, path }) })
      }
      return at.lab < slugs.length ? { resources, nextCursor: encodeListCursor(at) } : { resources }
    })

  /** The file a resource URI names, if the credential may read its lab. */
  const read = (principal: Principal, uri: string): Effect.Effect<{ contents: ReadonlyArray<unknown> }, DomainError> =>
    Option.match(parseUri(uri), {
      onNone: () => Effect.fail(new InvalidField({ field: "uri", problem: `is not a lab file resource (${FILE_TEMPLATE})` })),
      onSome: ({ slug, path: raw }) =>
        Effect.gen(function* () {
          // the decoded path meets the rules REST's `path` meets (a %00 or a lone surrogate decodes past the text check)
          const path = yield* Either.match(decodePath(raw), {
            onLeft: () => Effect.fail(new InvalidField({ field: "uri", problem: "does not name a file path this service stores" })),
            onRight: (p) => {
              const problem = problemWith(p)
              return problem === undefined ? Effect.succeed(p) : Effect.fail(new InvalidField({ field: "uri", problem }))
            }
          })
          const lab = yield* accessCounted(labs, principal, slug, "read")
          const file = yield* Effect.catchTag(files.read(lab.id, path), "NotFoundInLab", () =>
            Effect.fail(new NotKnown({ reason: `no file ${path} in lab ${slug}` }))
          )
          return { contents: [{ uri, mimeType: mimeOf(path), text: file.content }] }
        })
    })

  const templates = {
    resourceTemplates: [
      {
        uriTemplate: FILE_TEMPLATE,
        name: "lab file",
        description: "A text file of a lab, by the lab's slug and the file's path (list_files finds paths)",
        mimeType: "text/plain"
      }
    ]
  }

  return { list, read, templates }
})
