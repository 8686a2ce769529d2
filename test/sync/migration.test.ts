import { PGlite } from "@electric-sql/pglite"
import { afterEach, describe, expect, it } from "vitest"
import { migrations } from "../../src/db/Migrations.js"
import { sameOrigin } from "../../src/sync/RepoLink.js"

/** Migration 7 on a database an older version left: links with and without a token, a queued write. */
let db: PGlite | undefined
afterEach(async () => {
  await db?.close()
  db = undefined
})

describe("migration 7: token origin, outbox set-aside", () => {
  it("binds each stored token to its link's origin, and leaves queued writes pending", async () => {
    db = await PGlite.create()
    for (const m of migrations) if (m.id < 7 && m.sql.trim() !== "") await db.exec(m.sql)
    await db.exec(`
      INSERT INTO labs VALUES ('lab_1', 'one', 'One', 'team', now(), now()), ('lab_2', 'two', 'Two', 'team', now(), now());
      INSERT INTO lab_repos (lab_id, repo, repo_key, default_branch, auto_push, token_sealed, created_at, updated_at) VALUES
        ('lab_1', 'HTTPS://Git.Example.com:443/team/a.git', 'git.example.com/team/a', 'main', true, 'sealed', now(), now()),
        ('lab_2', 'http://10.0.0.5:8080/b.git', '10.0.0.5:8080/b', 'main', false, NULL, now(), now());
      INSERT INTO outbox (lab_id, path, content, actor, created_at) VALUES ('lab_1', '/.git./config', '[core]', 'key_old', now());`)
    const seven = migrations.find((m) => m.id === 7)
    expect(seven?.name).toMatch(/token origin/)
    await db.exec(seven?.sql ?? "")

    const links = (await db.query<{ lab_id: string; token_origin: string | null }>(`SELECT lab_id, token_origin FROM lab_repos ORDER BY lab_id`)).rows
    expect(links).toEqual([
      { lab_id: "lab_1", token_origin: "HTTPS://Git.Example.com:443" },
      { lab_id: "lab_2", token_origin: null }
    ])
    // compared as origins: the service hands this token to git.example.com over https, and nowhere else
    expect(sameOrigin(links[0]?.token_origin ?? "", "https://git.example.com/team/a.git")).toBe(true)
    expect(sameOrigin(links[0]?.token_origin ?? "", "https://git.example.com:8443/team/a.git")).toBe(false)
    const outbox = (await db.query(`SELECT set_aside_at, set_aside_reason FROM outbox`)).rows
    expect(outbox).toEqual([{ set_aside_at: null, set_aside_reason: null }])
  })
})

describe("migration 12: token bound to its repository", () => {
  it("binds each token given for its link's origin to the repository linked now; any other waits for a new one", async () => {
    db = await PGlite.create()
    for (const m of migrations) if (m.id < 12 && m.sql.trim() !== "") await db.exec(m.sql)
    await db.exec(`
      INSERT INTO labs VALUES ('lab_1', 'one', 'One', 'team', now(), now()), ('lab_2', 'two', 'Two', 'team', now(), now()),
        ('lab_3', 'three', 'Three', 'team', now(), now());
      INSERT INTO lab_repos (lab_id, repo, repo_key, default_branch, auto_push, token_sealed, token_origin, created_at, updated_at) VALUES
        ('lab_1', 'https://github.com/acme/a.git', 'github.com/acme/a', 'main', true, 'sealed', 'https://github.com', now(), now()),
        ('lab_2', 'https://evil.example/b.git', 'evil.example/b', 'main', false, 'sealed', 'https://github.com', now(), now()),
        ('lab_3', 'https://github.com/acme/c.git', 'github.com/acme/c', 'main', false, NULL, NULL, now(), now());`)
    const twelve = migrations.find((m) => m.id === 12)
    expect(twelve?.name).toMatch(/token bound to its repository/)
    await db.exec(twelve?.sql ?? "")
    const links = (await db.query<{ lab_id: string; token_repo: string | null }>(`SELECT lab_id, token_repo FROM lab_repos ORDER BY lab_id`)).rows
    expect(links).toEqual([
      { lab_id: "lab_1", token_repo: "https://github.com/acme/a.git" },
      { lab_id: "lab_2", token_repo: null },
      { lab_id: "lab_3", token_repo: null }
    ])
  })
})
