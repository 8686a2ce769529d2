import { createHash, createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  deliveryIdOf,
  eventOf,
  GIT_HOSTS,
  type GitHost,
  hostOfRepo,
  isGitHost,
  isSigned,
  pushedBranchesOf,
  repositoryIn,
  verifySignature
} from "../../src/sync/Webhooks.js"

/** The identity the receiver reads from a payload's text (a lexical scan: see JsonScan.ts). */
const repositoryOf = (host: GitHost, payload: unknown) => {
  const identity = repositoryIn(host, JSON.stringify(payload) ?? "")
  return { urls: identity.urls, fullName: identity.fullNames[0] }
}

// Headers arrive as node gives them: lower-case names.

/** GitHub's documented test vector (docs: "Validating webhook deliveries"). */
const GITHUB_SECRET = "It's a Secret to Everybody"
const GITHUB_BODY = "Hello, World!"
const GITHUB_SIGNATURE = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body, "utf8").digest("hex")
const sha256 = (body: string) => createHash("sha256").update(body, "utf8").digest("hex")

const secret = "4f1c0a9e".repeat(8)
const body = JSON.stringify({ ref: "refs/heads/main", note: "ünïcödé 研究" })
const good = hmac(secret, body)

describe("verifySignature", () => {
  describe("github: X-Hub-Signature-256 = sha256=<hmac hex>", () => {
    it("verifies GitHub's documented test vector", () => {
      expect(hmac(GITHUB_SECRET, GITHUB_BODY)).toBe(GITHUB_SIGNATURE)
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${GITHUB_SIGNATURE}` }, GITHUB_BODY, GITHUB_SECRET)).toBe(true)
    })

    it("verifies a body with multi-byte characters, signed over its UTF-8 bytes", () => {
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${good}` }, body, secret)).toBe(true)
    })

    it("refuses a wrong signature, a wrong secret, a changed body", () => {
      const flipped = `${GITHUB_SIGNATURE.slice(0, -1)}${GITHUB_SIGNATURE.endsWith("7") ? "8" : "7"}`
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${flipped}` }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${GITHUB_SIGNATURE}` }, GITHUB_BODY, "another secret")).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${GITHUB_SIGNATURE}` }, "Hello, World?", GITHUB_SECRET)).toBe(false)
    })

    it("refuses a missing header, an empty one, and the signature without its sha256= prefix", () => {
      expect(verifySignature("github", {}, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": undefined }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": "" }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": "sha256=" }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": GITHUB_SIGNATURE }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
    })

    it("refuses signatures of a different length, and the old SHA-1 header alone", () => {
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${GITHUB_SIGNATURE.slice(0, -2)}` }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-hub-signature-256": `sha256=${GITHUB_SIGNATURE}00` }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      const sha1 = createHmac("sha1", GITHUB_SECRET).update(GITHUB_BODY).digest("hex")
      expect(verifySignature("github", { "x-hub-signature": `sha1=${sha1}` }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
    })

    it("does not take another host's signature header", () => {
      expect(verifySignature("github", { "x-gitea-signature": GITHUB_SIGNATURE }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
      expect(verifySignature("github", { "x-gitlab-token": GITHUB_SECRET }, GITHUB_BODY, GITHUB_SECRET)).toBe(false)
    })
  })

  describe("gitlab: X-Gitlab-Token carries the secret itself", () => {
    it("accepts the exact secret, whatever the body", () => {
      expect(verifySignature("gitlab", { "x-gitlab-token": secret }, body, secret)).toBe(true)
      expect(verifySignature("gitlab", { "x-gitlab-token": secret }, "anything", secret)).toBe(true)
    })

    it("refuses another token, a prefix of it, a longer one, none, and an HMAC in its place", () => {
      expect(verifySignature("gitlab", { "x-gitlab-token": `${secret.slice(0, -1)}0` }, body, secret)).toBe(false)
      expect(verifySignature("gitlab", { "x-gitlab-token": secret.slice(0, 10) }, body, secret)).toBe(false)
      expect(verifySignature("gitlab", { "x-gitlab-token": `${secret}x` }, body, secret)).toBe(false)
      expect(verifySignature("gitlab", { "x-gitlab-token": "" }, body, secret)).toBe(false)
      expect(verifySignature("gitlab", {}, body, secret)).toBe(false)
      expect(verifySignature("gitlab", { "x-hub-signature-256": `sha256=${good}` }, body, secret)).toBe(false)
    })
  })

  describe("gitea and forgejo: bare hex HMAC", () => {
    it("gitea: X-Gitea-Signature, or GitHub's header that Gitea also sends", () => {
      expect(verifySignature("gitea", { "x-gitea-signature": good }, body, secret)).toBe(true)
      expect(verifySignature("gitea", { "x-hub-signature-256": `sha256=${good}` }, body, secret)).toBe(true)
      expect(verifySignature("gitea", { "x-gitea-signature": `sha256=${good}` }, body, secret)).toBe(false)
      expect(verifySignature("gitea", { "x-gitea-signature": hmac("other", body) }, body, secret)).toBe(false)
      expect(verifySignature("gitea", { "x-gitea-signature": good.slice(0, 32) }, body, secret)).toBe(false)
      expect(verifySignature("gitea", {}, body, secret)).toBe(false)
    })

    it("forgejo: X-Forgejo-Signature, or the Gitea header", () => {
      expect(verifySignature("forgejo", { "x-forgejo-signature": good }, body, secret)).toBe(true)
      expect(verifySignature("forgejo", { "x-gitea-signature": good }, body, secret)).toBe(true)
      expect(verifySignature("forgejo", { "x-forgejo-signature": hmac(secret, `${body} `) }, body, secret)).toBe(false)
      expect(verifySignature("forgejo", { "x-forgejo-signature": `${good}ab` }, body, secret)).toBe(false)
      expect(verifySignature("forgejo", {}, body, secret)).toBe(false)
    })
  })

  describe("bitbucket: X-Hub-Signature = sha256=<hmac hex>", () => {
    it("verifies the sha256= signature on X-Hub-Signature", () => {
      expect(verifySignature("bitbucket", { "x-hub-signature": `sha256=${good}` }, body, secret)).toBe(true)
    })

    it("refuses a wrong one, a bare one, a missing one, and GitHub's header name", () => {
      expect(verifySignature("bitbucket", { "x-hub-signature": `sha256=${hmac("nope", body)}` }, body, secret)).toBe(false)
      expect(verifySignature("bitbucket", { "x-hub-signature": good }, body, secret)).toBe(false)
      expect(verifySignature("bitbucket", { "x-hub-signature": `sha256=${good.slice(1)}` }, body, secret)).toBe(false)
      expect(verifySignature("bitbucket", {}, body, secret)).toBe(false)
      expect(verifySignature("bitbucket", { "x-hub-signature-256": `sha256=${good}` }, body, secret)).toBe(false)
    })
  })

  it("never verifies anything with an empty header set, on any host", () => {
    for (const host of GIT_HOSTS) expect(verifySignature(host, {}, body, secret), host).toBe(false)
  })
})

describe("isSigned", () => {
  it("sees a signature (or GitLab's token) in a header of the delivery's host only", () => {
    expect(isSigned("github", { "x-hub-signature-256": "sha256=0" })).toBe(true)
    expect(isSigned("github", { "x-hub-signature": "sha1=0", "x-gitlab-token": "t" })).toBe(false)
    expect(isSigned("gitlab", { "x-gitlab-token": "t" })).toBe(true)
    expect(isSigned("gitea", { "x-hub-signature-256": "sha256=0" })).toBe(true)
    expect(isSigned("forgejo", { "x-gitea-signature": "0" })).toBe(true)
    expect(isSigned("bitbucket", { "x-hub-signature": "sha256=0" })).toBe(true)
    for (const host of GIT_HOSTS) expect(isSigned(host, {})).toBe(false)
  })
})

describe("isGitHost", () => {
  it("knows the five hosts and nothing else", () => {
    for (const host of ["github", "gitlab", "gitea", "forgejo", "bitbucket"]) expect(isGitHost(host), host).toBe(true)
    for (const host of ["GitHub", "codeberg", "", "github "]) expect(isGitHost(host), host).toBe(false)
  })
})

describe("eventOf", () => {
  const cases: ReadonlyArray<readonly [GitHost, Record<string, string>, "push" | "ping" | "other"]> = [
    ["github", { "x-github-event": "push" }, "push"],
    ["github", { "x-github-event": "ping" }, "ping"],
    ["github", { "x-github-event": "pull_request" }, "other"],
    ["github", { "x-gitlab-event": "Push Hook" }, "other"],
    ["gitlab", { "x-gitlab-event": "Push Hook" }, "push"],
    ["gitlab", { "x-gitlab-event": "Tag Push Hook" }, "other"],
    ["gitlab", { "x-gitlab-event": "Merge Request Hook" }, "other"],
    ["gitlab", { "x-github-event": "push" }, "other"],
    ["gitea", { "x-gitea-event": "push" }, "push"],
    ["gitea", { "x-gitea-event": "create" }, "other"],
    ["forgejo", { "x-forgejo-event": "push" }, "push"],
    ["forgejo", { "x-gitea-event": "push" }, "push"],
    ["forgejo", { "x-forgejo-event": "issues" }, "other"],
    ["bitbucket", { "x-event-key": "repo:push" }, "push"],
    ["bitbucket", { "x-event-key": "diagnostics:ping" }, "ping"],
    ["bitbucket", { "x-event-key": "pullrequest:created" }, "other"]
  ]

  it.each(cases)("%s %j is %s", (host, headers, event) => {
    expect(eventOf(host, headers)).toBe(event)
  })

  it("takes a delivery without an event header as other, on every host", () => {
    for (const host of GIT_HOSTS) expect(eventOf(host, {}), host).toBe("other")
  })
})

describe("deliveryIdOf", () => {
  const cases: ReadonlyArray<readonly [GitHost, Record<string, string>, string]> = [
    ["github", { "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" }, "72d3162e-cc78-11e3-81ab-4c9367dc0958"],
    ["gitlab", { "x-gitlab-event-uuid": "13792a34-cac6-4fda-95a8-c58e00a3954e" }, "13792a34-cac6-4fda-95a8-c58e00a3954e"],
    ["gitlab", { "idempotency-key": "f5e5f430-f57b-4e6e-9fac-d9128cd7232f" }, "f5e5f430-f57b-4e6e-9fac-d9128cd7232f"],
    ["gitea", { "x-gitea-delivery": "f6266f16-1bf3-46a5-9ea4-602e06ead473" }, "f6266f16-1bf3-46a5-9ea4-602e06ead473"],
    ["forgejo", { "x-forgejo-delivery": "a1b2c3d4" }, "a1b2c3d4"],
    ["forgejo", { "x-gitea-delivery": "e5f6a7b8" }, "e5f6a7b8"],
    ["bitbucket", { "x-request-uuid": "{0d2c5a1e-2b9d-4e5f-8c3a-1b2c3d4e5f60}" }, "{0d2c5a1e-2b9d-4e5f-8c3a-1b2c3d4e5f60}"]
  ]

  it.each(cases)("%s takes the delivery id from %j", (host, headers, id) => {
    expect(deliveryIdOf(host, headers, body)).toBe(id)
  })

  it("does not take another host's delivery header", () => {
    expect(deliveryIdOf("github", { "x-gitea-delivery": "not-github" }, body)).toBe(`body-sha256:${sha256(body)}`)
    expect(deliveryIdOf("gitea", { "x-github-delivery": "not-gitea" }, body)).toBe(`body-sha256:${sha256(body)}`)
  })

  it("falls back to the body's SHA-256 without a delivery header: a redelivery matches, another push does not", () => {
    for (const host of GIT_HOSTS) {
      expect(deliveryIdOf(host, {}, body), host).toBe(`body-sha256:${sha256(body)}`)
      expect(deliveryIdOf(host, {}, body), host).toBe(deliveryIdOf(host, {}, body))
      expect(deliveryIdOf(host, {}, `${body}\n`), host).not.toBe(deliveryIdOf(host, {}, body))
    }
  })

  it("bitbucket: the webhook's own id (X-Hook-UUID, the same on every delivery) does not identify a delivery", () => {
    const hook = { "x-hook-uuid": "{7b3e1c2a-0000-4000-8000-000000000001}" }
    const first = JSON.stringify({ push: { changes: [{ new: { type: "branch", name: "main", target: { hash: "a".repeat(40) } } }] } })
    const second = JSON.stringify({ push: { changes: [{ new: { type: "branch", name: "main", target: { hash: "b".repeat(40) } } }] } })
    expect(deliveryIdOf("bitbucket", hook, first)).not.toBe(deliveryIdOf("bitbucket", hook, second))
  })
})

describe("repositoryIn", () => {
  it("github: clone_url, html_url and full_name", () => {
    const payload = {
      ref: "refs/heads/main",
      repository: {
        full_name: "octo/lab-notes",
        html_url: "https://github.com/octo/lab-notes",
        clone_url: "https://github.com/octo/lab-notes.git",
        ssh_url: "git@github.com:octo/lab-notes.git"
      }
    }
    expect(repositoryOf("github", payload)).toEqual({
      urls: ["https://github.com/octo/lab-notes.git", "https://github.com/octo/lab-notes"],
      fullName: "octo/lab-notes"
    })
  })

  it("gitea and forgejo: the same shape as GitHub's", () => {
    const payload = {
      repository: { full_name: "team/notes", html_url: "https://codeberg.org/team/notes", clone_url: "https://codeberg.org/team/notes.git" }
    }
    const expected = { urls: ["https://codeberg.org/team/notes.git", "https://codeberg.org/team/notes"], fullName: "team/notes" }
    expect(repositoryOf("gitea", payload)).toEqual(expected)
    expect(repositoryOf("forgejo", payload)).toEqual(expected)
  })

  it("gitlab: project.git_http_url, project.web_url, repository.git_http_url and path_with_namespace", () => {
    const payload = {
      object_kind: "push",
      ref: "refs/heads/main",
      project: {
        path_with_namespace: "group/sub/notes",
        web_url: "https://gitlab.com/group/sub/notes",
        git_http_url: "https://gitlab.com/group/sub/notes.git",
        git_ssh_url: "git@gitlab.com:group/sub/notes.git"
      },
      repository: { git_http_url: "https://gitlab.com/group/sub/notes.git" }
    }
    expect(repositoryOf("gitlab", payload)).toEqual({
      urls: ["https://gitlab.com/group/sub/notes.git", "https://gitlab.com/group/sub/notes", "https://gitlab.com/group/sub/notes.git"],
      fullName: "group/sub/notes"
    })
  })

  it("bitbucket: links.html.href and full_name", () => {
    const payload = {
      repository: {
        full_name: "team/notes",
        links: { html: { href: "https://bitbucket.org/team/notes" } }
      },
      push: { changes: [] }
    }
    expect(repositoryOf("bitbucket", payload)).toEqual({ urls: ["https://bitbucket.org/team/notes"], fullName: "team/notes" })
  })

  it("finds nothing in payloads of the wrong shape, without throwing", () => {
    const shapes: ReadonlyArray<unknown> = [
      null,
      undefined,
      "a string",
      42,
      [],
      {},
      { repository: null },
      { repository: "octo/notes" },
      { repository: { full_name: 7, clone_url: ["x"], html_url: {} } },
      { repository: { full_name: "", clone_url: "" } },
      { project: { path_with_namespace: null }, repository: { links: null } }
    ]
    for (const host of GIT_HOSTS) {
      for (const payload of shapes) expect(repositoryOf(host, payload), `${host} ${JSON.stringify(payload)}`).toEqual({ urls: [], fullName: undefined })
    }
  })

  it("reads only its own host's shape", () => {
    const github = { repository: { full_name: "octo/notes", clone_url: "https://github.com/octo/notes.git" } }
    expect(repositoryOf("gitlab", github)).toEqual({ urls: [], fullName: undefined })
    expect(repositoryOf("bitbucket", github)).toEqual({ urls: [], fullName: "octo/notes" })
  })
})

describe("pushedBranchesOf", () => {
  it("github, gitlab, gitea, forgejo: the branch of refs/heads/<branch>", () => {
    for (const host of ["github", "gitlab", "gitea", "forgejo"] as const) {
      expect(pushedBranchesOf(host, { ref: "refs/heads/main" }), host).toEqual(["main"])
      expect(pushedBranchesOf(host, { ref: "refs/heads/feature/x-1" }), host).toEqual(["feature/x-1"])
    }
  })

  it("ignores tags and other refs", () => {
    for (const host of ["github", "gitlab", "gitea", "forgejo"] as const) {
      expect(pushedBranchesOf(host, { ref: "refs/tags/v1.0" }), host).toEqual([])
      expect(pushedBranchesOf(host, { ref: "refs/heads" }), host).toEqual([])
      expect(pushedBranchesOf(host, { ref: "main" }), host).toEqual([])
      expect(pushedBranchesOf(host, { ref: "refs/notes/commits" }), host).toEqual([])
      expect(pushedBranchesOf(host, {}), host).toEqual([])
      expect(pushedBranchesOf(host, { ref: 7 }), host).toEqual([])
      expect(pushedBranchesOf(host, null), host).toEqual([])
    }
  })

  it("does not mistake a tag named like a branch for the branch", () => {
    expect(pushedBranchesOf("github", { ref: "refs/tags/refs/heads/main" })).toEqual([])
  })

  it("bitbucket: every branch in push.changes, ignoring tags and deletions", () => {
    const payload = {
      push: {
        changes: [
          { new: { type: "branch", name: "main" }, old: { type: "branch", name: "main" } },
          { new: { type: "tag", name: "v1.0" }, old: null },
          { new: null, old: { type: "branch", name: "gone" } },
          { new: { type: "branch", name: "develop" }, old: null },
          { new: { type: "branch", name: "" } },
          { new: { type: "branch" } },
          "garbage"
        ]
      }
    }
    expect(pushedBranchesOf("bitbucket", payload)).toEqual(["main", "develop"])
  })

  it("bitbucket: nothing from a payload without changes, or GitHub's shape", () => {
    expect(pushedBranchesOf("bitbucket", { push: { changes: [] } })).toEqual([])
    expect(pushedBranchesOf("bitbucket", { push: {} })).toEqual([])
    expect(pushedBranchesOf("bitbucket", { push: { changes: "main" } })).toEqual([])
    expect(pushedBranchesOf("bitbucket", { ref: "refs/heads/main" })).toEqual([])
    expect(pushedBranchesOf("bitbucket", null)).toEqual([])
  })
})

describe("hostOfRepo", () => {
  const cases: ReadonlyArray<readonly [string, GitHost]> = [
    ["https://github.com/octo/notes.git", "github"],
    ["https://github.com/octo/notes", "github"],
    ["https://gitlab.com/group/sub/notes.git", "gitlab"],
    ["https://gitlab.example.org/team/notes.git", "gitlab"],
    ["https://bitbucket.org/team/notes.git", "bitbucket"],
    ["https://user@bitbucket.org/team/notes.git", "bitbucket"],
    ["https://codeberg.org/team/notes.git", "forgejo"],
    ["https://forgejo.example.net/team/notes.git", "forgejo"],
    ["https://gitea.com/team/notes.git", "gitea"],
    ["https://gitea.internal:3000/team/notes.git", "gitea"],
    ["https://git.example.com/team/notes.git", "github"]
  ]

  it.each(cases)("%s -> %s", (url, host) => {
    expect(hostOfRepo(url)).toBe(host)
  })

  it("looks at the host name only, not the path", () => {
    expect(hostOfRepo("https://github.com/gitlab-org/gitlab-mirror.git")).toBe("github")
    expect(hostOfRepo("https://gitlab.com/octo/github-import.git")).toBe("gitlab")
  })
})
