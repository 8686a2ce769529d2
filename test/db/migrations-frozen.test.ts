import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { migrations } from "../../src/db/Migrations.js"
import { checksumOf } from "../../src/db/Migrator.js"

/**
 * The sha256 of each released migration's SQL, as deployments applied it. A released migration never changes (a
 * database that applied it would not see the change); a new migration adds its line here when it is released.
 */
const RELEASED: ReadonlyArray<readonly [id: number, sha256: string]> = [
  [1, "ab6d845f023b5e4d0a16014cc39e1737e0e59883b4a40b2d08732aacbdc1e32f"],
  [2, "5874e1971197fdbcb19fd0b4c7be3e7bc24993e0f22d31dfce5061dfa1c04f99"],
  [3, "92e1d4dce3b84cc5969c0e08ba27ea5ba838d15de6865ba0e33ac344cae707cb"],
  [4, "2efe8d890206a96afef9892187f8eb10d0f76d373b898897d0e5a6a10701f30a"],
  [5, "946c1b21fbe9ae4f4047c5c5ae96decc3c83d38b587c7f5df8e168162de11ff2"],
  [6, "b272fa1f26faf359c26e29d481a0b67adf6cddfc4c1df83e93d632b2f71d2832"],
  [7, "54eff11bb18fcd4e10ec4b49c567ad36fe17564f91a4e0414e55eff4d483f965"],
  [8, "fe90be8265fa0837be48267c6006028c2c5764f48422952ea2f7178074bc4111"],
  [9, "381214db1d7b05d057f20974443fa607074453e2711243f19b1e150721bfad7b"],
  [10, "b4fd2241058c62d94e3bb4d46a59d9abdc9d84a9a45d5addb7de8993ac109ebb"],
  [11, "afea28b570ecf1ec35cd6445a1de230b117ebc967e070676e3d6b7fb6c0cdfb4"],
  [12, "71926767f2283817630dcd4b20ab5e8d19f79f2013f6b42d42c6ae8c72559ccd"],
  [13, "49460475afe238aca87293e97fbc89b4c13ca14dff6b5c81ceb0db3730150dd6"],
  [14, "49f2d055a19f54395c2db8d26c43a211cfe821f16110a4d981ef6d774c82de88"],
  [15, "da8fd627eeb0bedb1d520f200bf9a21ce61b59d268c3d443b0194f73d3d8b5f2"],
  [16, "76bc29ff8436307fb89f6e89ea41eb2a60945c161e7713320d21cb1c6dbe43b1"],
  [17, "2d6334fd7e6b1cd9a4fc590ddc89609c216d8e0063ca091a6e6d964ff7d74eee"]
]

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

describe("released migrations", () => {
  it.each(RELEASED)("migration %i keeps the text deployments applied", (id, released) => {
    const migration = migrations.find((m) => m.id === id)
    expect(migration, `migration ${id} was released: it cannot be removed`).toBeDefined()
    expect(
      sha256(migration?.sql ?? ""),
      `migration ${id} (${migration?.name}) was released and deployments applied it as it was: restore its text, ` +
        `and add a new migration (next id) for the change instead`
    ).toBe(released)
  })

  it("come first, in order, with ids 1, 2, 3…; a migration after them is new (add its checksum above when released)", () => {
    const ids = migrations.map((m) => m.id)
    expect(ids.slice(0, RELEASED.length)).toEqual(RELEASED.map(([id]) => id))
    expect(ids).toEqual(ids.map((_, i) => i + 1))
  })

  it("are recorded by the runner under the same checksum", () => {
    for (const migration of migrations) expect(checksumOf(migration)).toBe(sha256(migration.sql))
  })
})
