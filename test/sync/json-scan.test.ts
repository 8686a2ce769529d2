import { describe, expect, it } from "vitest"
import { MAX_DEPTH, MAX_LITERAL, scanJsonStrings } from "../../src/sync/JsonScan.js"
import { documentOf, repositoryIn } from "../../src/sync/Webhooks.js"

const REPO = [["repository", "full_name"], ["repository", "clone_url"]] as const

const scan = (text: string) => {
  const result = scanJsonStrings(text, REPO)
  return { object: result.object, fullName: result.values.get("repository/full_name") ?? [], cloneUrl: result.values.get("repository/clone_url") ?? [] }
}

describe("scanJsonStrings", () => {
  it("finds the strings at the wanted paths of what JSON.stringify writes, whatever surrounds them", () => {
    const payload = {
      ref: "refs/heads/main",
      commits: [{ repository: { full_name: "not/this" }, message: "{\"repository\":{\"full_name\":\"nor/this\"}}" }],
      sender: { full_name: "nor/that", repository: { full_name: "too/deep" } },
      repository: { id: 7, private: false, owner: { login: "octo" }, full_name: "octo/notes", clone_url: "https://h/octo/notes.git", topics: [] },
      after: null
    }
    expect(scan(JSON.stringify(payload))).toEqual({ object: true, fullName: ["octo/notes"], cloneUrl: ["https://h/octo/notes.git"] })
    expect(scan(JSON.stringify(payload, null, 2))).toEqual({ object: true, fullName: ["octo/notes"], cloneUrl: ["https://h/octo/notes.git"] })
  })

  it("decodes escapes in the literals it keeps and in keys", () => {
    const text = '{"repo\\u0073itory": {"full_name": "o\\/n\\u00e9 \\"x\\"", "clone_url": "a\\\\"}}'
    expect(JSON.parse(text)).toEqual({ repository: { full_name: 'o/né "x"', clone_url: "a\\" } })
    expect(scan(text)).toEqual({ object: true, fullName: ['o/né "x"'], cloneUrl: ["a\\"] })
  })

  it("is not fooled by a key-like text inside a string, or by escaped quotes before it", () => {
    const text = JSON.stringify({ note: 'x\\", "repository": {"full_name": "evil/x"}', repository: { full_name: "good/x" } })
    expect(scan(text).fullName).toEqual(["good/x"])
  })

  it("keeps every value of a repeated key (each is a candidate; the signature decides), a few at most", () => {
    const text = '{"repository":{"full_name":"a/1"},"repository":{"full_name":"b/2","full_name":"c/3"}}'
    expect(scan(text).fullName).toEqual(["a/1", "b/2", "c/3"])
    const many = `{"repository":{${Array.from({ length: 50 }, (_, i) => `"full_name":"r/${i}"`).join(",")}}}`
    expect(scan(many).fullName).toHaveLength(4)
  })

  it("ignores empty strings, non-strings and literals too long to be a name", () => {
    expect(scan('{"repository":{"full_name":"","clone_url":7}}')).toEqual({ object: true, fullName: [], cloneUrl: [] })
    expect(scan(`{"repository":{"full_name":"${"x".repeat(MAX_LITERAL + 1)}"}}`).fullName).toEqual([])
    expect(scan('{"repository":{"full_name":{"a":"b/c"}}}').fullName).toEqual([])
    expect(scan('{"repository":["full_name","x/y"]}').fullName).toEqual([])
  })

  it("says when the text is not one JSON object, without throwing", () => {
    for (const text of ["", "   ", "[]", '"s"', "42", "null", "{", '{"a":"b"', '{"a":"b}', "{}}", "{} x", "{]", "payload=%7B%7D"]) {
      expect(scanJsonStrings(text, REPO).object, text).toBe(false)
    }
    expect(scanJsonStrings(" {} \n", REPO).object).toBe(true)
    expect(scanJsonStrings(`${"[".repeat(10)}`, REPO).object).toBe(false)
  })

  it("stops at absurd depth, and scans 3 MB in one linear pass", () => {
    expect(scanJsonStrings(`{"a":${"[".repeat(MAX_DEPTH + 10)}${"]".repeat(MAX_DEPTH + 10)}}`, REPO).object).toBe(false)
    const big = JSON.stringify({
      commits: Array.from({ length: 20_000 }, (_, i) => ({ id: `${i}`.padStart(40, "0"), message: "m\\\"".repeat(20), added: ["a", "b"] })),
      repository: { full_name: "octo/big" }
    })
    expect(big.length).toBeGreaterThan(3_000_000)
    const started = performance.now()
    expect(scan(big).fullName).toEqual(["octo/big"])
    expect(performance.now() - started).toBeLessThan(1_000)
  })
})

describe("documentOf and repositoryIn", () => {
  it("reads GitHub's form encoding (payload=<url-encoded JSON>)", () => {
    const json = JSON.stringify({ repository: { full_name: "octo/form notes", clone_url: "https://github.com/octo/x.git" } })
    const form = `payload=${encodeURIComponent(json).replace(/%20/g, "+")}`
    const document = documentOf("application/x-www-form-urlencoded", form)
    expect(document).toBe(json)
    expect(repositoryIn("github", document ?? "")).toEqual({
      urls: ["https://github.com/octo/x.git"],
      fullNames: ["octo/form notes"],
      json: true
    })
    expect(documentOf("application/x-www-form-urlencoded", "other=1")).toBeUndefined()
    expect(documentOf("application/x-www-form-urlencoded", "payload=%E0%A4%A")).toBeUndefined()
    expect(documentOf("application/json", form)).toBe(form)
  })
})
