/**
 * The stage of the sync tests that speak HTTP: a git server on loopback (git's own http-backend) and the service on
 * disk git under a scratch directory, started before a file's tests and stopped after them.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { diskGit } from "./DiskGit.js"
import { type GitServer, startGitServer, workingCopy } from "./GitServer.js"
import { put, type User } from "./SyncSupport.js"
import { startTestServer, type TestServer } from "./TestServer.js"

export interface SyncStage {
  readonly git: GitServer
  readonly server: TestServer
  /** the service's git directory */
  readonly root: string
}

/** Start the stage before the file's tests (`prefix` names the scratch directory) and hand it to `started`. */
export const useSyncServer = (prefix: string, started: (stage: SyncStage) => void, timeoutMillis = 10_000) => {
  let stage: Partial<SyncStage> = {}
  beforeAll(async () => {
    const git = await startGitServer()
    stage = { git }
    const root = await mkdtemp(join(tmpdir(), prefix))
    stage = { git, root }
    const server = await startTestServer({ git: diskGit(root, timeoutMillis) })
    started({ git, root, server })
    stage = { git, root, server }
  }, 120_000)
  afterAll(async () => {
    await stage.server?.close()
    await stage.git?.close()
    if (stage.root !== undefined) await rm(stage.root, { recursive: true, force: true })
  })
}

/** A git server and a scratch directory for a describe block (or a file), removed after its tests. */
export const useGitServer = (prefix: string, started: (git: GitServer, root: string) => void) => {
  let git: GitServer | undefined
  let root: string | undefined
  beforeAll(async () => {
    git = await startGitServer()
    root = await mkdtemp(join(tmpdir(), prefix))
    started(git, root)
  })
  afterAll(async () => {
    await git?.close()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })
}

/** A repository `name` on `host` with `files` in its first commit: its URL, a working copy and that commit. */
export const repoWith = async (host: GitServer, name: string, files: Record<string, string>) => {
  const url = await host.createRepo(name)
  const wc = await workingCopy(url)
  for (const [path, content] of Object.entries(files)) await put(wc.dir, path, content)
  const head = await wc.commitAndPush("first")
  return { url, head, wc }
}

/** A repository `name` on `host` with `files` in a first commit, and a lab `slug` of `as` linked to it and synced. */
export const linkedLab = async (
  host: GitServer,
  as: User,
  repo: { readonly slug: string; readonly name: string; readonly files: Record<string, string>; readonly autoPushOnEdit: boolean }
) => {
  const { url, wc, head: c0 } = await repoWith(host, repo.name, repo.files)
  const labId = await as.createLab(repo.slug)
  await as.link(labId, url, repo.autoPushOnEdit)
  await as.syncedTo(labId, c0)
  return { url, wc, labId, c0 }
}
