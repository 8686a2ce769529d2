import { execFile, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/**
 * A real git smart-HTTP server on loopback: git's own `git http-backend` (CGI)
 * behind a small node:http bridge. Repositories live in a temp directory.
 * `failWith(503, n)` makes the next n requests fail, as a host that is down;
 * `holdUploadPack()` keeps fetches' pack answers waiting until released.
 */
export interface GitServer {
  readonly baseUrl: string
  readonly root: string
  /** Create a bare repository with `branch` as HEAD; returns its clone URL. */
  readonly createRepo: (name: string, branch?: string) => Promise<string>
  /** Make the next `count` requests answer `status` (all of them until `failWith(0)` when count is Infinity). */
  readonly failWith: (status: number, count: number) => void
  /** From now on every other request answers `status` (the next one is served, the one after fails, …); 0 stops. */
  readonly failEveryOther: (status: number) => void
  /** Requests served so far, by service (git-upload-pack = fetch, git-receive-pack = push). */
  readonly requests: () => ReadonlyArray<string>
  /** The `Authorization` header of each request so far, in order (undefined when it had none). */
  readonly authorizations: () => ReadonlyArray<string | undefined>
  /** Each request so far, in order: its path and its `Authorization` header. */
  readonly received: () => ReadonlyArray<{ readonly path: string; readonly authorization: string | undefined }>
  /**
   * From now on, fetches' pack requests (POST git-upload-pack) wait unanswered until the returned
   * function is called, which serves those waiting and stops holding.
   */
  readonly holdUploadPack: () => () => void
  /** Pack requests waiting because of `holdUploadPack`. */
  readonly heldRequests: () => number
  /** As `holdUploadPack`, for pushes (POST git-receive-pack): they wait unanswered until the returned function is called. */
  readonly holdReceivePack: () => () => void
  /** Push requests waiting because of `holdReceivePack`. */
  readonly heldPushes: () => number
  /** Milliseconds git spent answering pushes (POST git-receive-pack, from its start to its end) so far. */
  readonly receiveMillis: () => number
  readonly close: () => Promise<void>
}

const parseCgi = (output: Buffer): { status: number; headers: Record<string, string>; body: Buffer } => {
  let end = output.indexOf("\r\n\r\n")
  let sep = 4
  if (end === -1) {
    end = output.indexOf("\n\n")
    sep = 2
  }
  const head = output.subarray(0, end).toString("utf8")
  const headers: Record<string, string> = {}
  let status = 200
  for (const line of head.split(/\r?\n/)) {
    const i = line.indexOf(":")
    if (i === -1) continue
    const key = line.slice(0, i).trim()
    const value = line.slice(i + 1).trim()
    if (key.toLowerCase() === "status") status = Number.parseInt(value, 10)
    else headers[key] = value
  }
  return { status, headers, body: output.subarray(end + sep) }
}

/** POST requests to one git service (`git-upload-pack`, `git-receive-pack`), kept unanswered while the hold is on. */
const holdOf = (service: string) => {
  let waiting: Array<() => void> | undefined
  return {
    /** Keeps `answer` for later when the hold is on and the request is for this service. */
    caught: (req: IncomingMessage, url: URL, answer: () => void): boolean => {
      if (waiting === undefined || req.method !== "POST" || !url.pathname.endsWith(`/${service}`)) return false
      waiting.push(answer)
      return true
    },
    /** Starts holding; the returned function serves those waiting and stops holding. */
    start: () => {
      const mine: Array<() => void> = []
      waiting = mine
      return () => {
        if (waiting === mine) waiting = undefined
        for (const answer of mine.splice(0)) answer()
      }
    },
    count: () => waiting?.length ?? 0
  }
}

export const startGitServer = async (): Promise<GitServer> => {
  const root = await mkdtemp(join(tmpdir(), "lab-git-"))
  let failures = { status: 0, count: 0 }
  let alternate = { status: 0, served: 0 }
  const served: Array<string> = []
  const authorizations: Array<string | undefined> = []
  const received: Array<{ readonly path: string; readonly authorization: string | undefined }> = []
  const fetches = holdOf("git-upload-pack")
  const pushes = holdOf("git-receive-pack")
  let receiveMillis = 0

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    served.push(url.searchParams.get("service") ?? url.pathname.split("/").at(-1) ?? "")
    authorizations.push(req.headers.authorization)
    received.push({ path: url.pathname, authorization: req.headers.authorization })
    const answer = () => serve(req, res, url)
    if (fetches.caught(req, url, answer) || pushes.caught(req, url, answer)) return
    answer()
  }

  const serve = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (alternate.status !== 0 && alternate.served++ % 2 === 1) {
      res.writeHead(alternate.status, { "content-type": "text/plain" }).end("unavailable (test)")
      return
    }
    if (failures.count > 0) {
      failures.count--
      res.writeHead(failures.status, { "content-type": "text/plain" }).end("unavailable (test)")
      return
    }
    const child = spawn("git", ["http-backend"], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        REMOTE_USER: "tester",
        REMOTE_ADDR: "127.0.0.1",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        CONTENT_LENGTH: req.headers["content-length"] ?? "",
        HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
        GIT_PROTOCOL: typeof req.headers["git-protocol"] === "string" ? req.headers["git-protocol"] : ""
      }
    })
    const chunks: Array<Buffer> = []
    const started = performance.now()
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.stderr.on("data", () => {})
    child.on("close", () => {
      if (req.method === "POST" && url.pathname.endsWith("/git-receive-pack")) receiveMillis += performance.now() - started
      const { status, headers, body } = parseCgi(Buffer.concat(chunks))
      res.writeHead(status, headers).end(body)
    })
    req.pipe(child.stdin)
  }

  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("git server has no TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`

  return {
    baseUrl,
    root,
    createRepo: async (name, branch = "main") => {
      const dir = join(root, `${name}.git`)
      await run("git", ["init", "--bare", "--quiet", `--initial-branch=${branch}`, dir])
      await run("git", ["config", "http.receivepack", "true"], { cwd: dir })
      return `${baseUrl}/${name}.git`
    },
    failWith: (status, count) => {
      failures = { status, count }
    },
    failEveryOther: (status) => {
      alternate = { status, served: 0 }
    },
    requests: () => [...served],
    receiveMillis: () => receiveMillis,
    authorizations: () => [...authorizations],
    received: () => [...received],
    holdUploadPack: fetches.start,
    heldRequests: fetches.count,
    holdReceivePack: pushes.start,
    heldPushes: pushes.count,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await rm(root, { recursive: true, force: true })
    }
  }
}

/**
 * A working copy driven by the git CLI, asynchronously (a blocking git push in
 * the process that serves git would deadlock).
 */
export const workingCopy = async (url: string, branch = "main") => {
  const dir = await mkdtemp(join(tmpdir(), "lab-wc-"))
  const git = (...args: ReadonlyArray<string>) =>
    run("git", [...args], {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "Outside Author",
        GIT_AUTHOR_EMAIL: "outside@example.com",
        GIT_COMMITTER_NAME: "Outside Author",
        GIT_COMMITTER_EMAIL: "outside@example.com"
      },
      maxBuffer: 64 * 1024 * 1024
    }).then((r) => r.stdout.trim())
  await git("init", "--quiet", `--initial-branch=${branch}`)
  await git("remote", "add", "origin", url)
  return {
    dir,
    git,
    /** Fetch and reset to the remote branch (after the service pushed). */
    pull: async () => {
      await git("fetch", "--quiet", "origin", branch)
      await git("reset", "--quiet", "--hard", `origin/${branch}`)
    },
    /** Stage everything, commit, push; returns the new commit id. */
    commitAndPush: async (message: string, targetBranch = branch) => {
      await git("add", "-A")
      await git("commit", "--quiet", "--allow-empty", "-m", message)
      await git("push", "--quiet", "origin", `HEAD:refs/heads/${targetBranch}`)
      return git("rev-parse", "HEAD")
    },
    remove: () => rm(dir, { recursive: true, force: true })
  }
}
