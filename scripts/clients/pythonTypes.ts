/**
 * JSON Schema → Python for the Python client: the type a value is annotated with, the expression that decodes it from
 * JSON, and the dataclasses of the named schemas that answers carry (lab_service/_generated/models.py).
 */
import type { JsonSchema, Model } from "./Model.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const asRecord = (u: unknown): Record<string, unknown> => (isRecord(u) ? u : {})
const asString = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)
const asArray = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

const KEYWORDS = new Set(
  ("False None True and as assert async await break class continue def del elif else except finally for from global if " +
    "import in is lambda nonlocal not or pass raise return try while with yield").split(" ")
)

/** labId → lab_id; a Python keyword gets a trailing underscore. */
export const snake = (name: string): string => {
  const s = name
    .replace(/[^A-Za-z0-9_]+/g, "_")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
  const safe = /^[0-9]/.test(s) ? `_${s}` : s
  return KEYWORDS.has(safe) ? `${safe}_` : safe
}

export const pascal = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p.length > 0)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join("")

/** A Python string literal. */
export const pyString = (s: string): string => JSON.stringify(s)

/** Text safe inside a """docstring""". */
export const docText = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"""/g, '\\"\\"\\"')

const refName = (schema: JsonSchema): string | undefined => asString(schema["$ref"])?.replace("#/components/schemas/", "")

/** A decoded value: its annotation, and how to make it from `value` (undefined when the JSON value is it already). */
export interface PyType {
  readonly annotation: string
  readonly decode: ((value: string) => string) | undefined
}

const plain = (annotation: string): PyType => ({ annotation, decode: undefined })

const isTimestamp = (name: string | undefined, schema: Record<string, unknown>) =>
  name === "Timestamp" || name === "DateTimeUtc" || schema["format"] === "date-time"

/** Named schemas that become dataclasses: objects with properties. */
export const isModelSchema = (schema: JsonSchema): boolean =>
  schema["type"] === "object" && isRecord(schema["properties"]) && Object.keys(schema["properties"]).length > 0

export class PythonTypes {
  /** the named schemas reached from answers, made into dataclasses */
  readonly used = new Set<string>()

  constructor(private readonly model: Model) {}

  schemaOf(schema: JsonSchema): Record<string, unknown> {
    const name = refName(schema)
    return name === undefined ? asRecord(schema) : asRecord(this.model.schemas[name])
  }

  typeOf(schema: JsonSchema, depth = 0): PyType {
    if (depth > 20) return plain("Any")
    const name = refName(schema)
    if (name !== undefined) {
      const target = asRecord(this.model.schemas[name])
      if (isTimestamp(name, target)) return { annotation: "datetime", decode: (v) => `_d.timestamp(${v})` }
      if (isModelSchema(target)) {
        this.used.add(name)
        const cls = pascal(name)
        return { annotation: cls, decode: (v) => `_d.model(${v}, ${cls})` }
      }
      return this.typeOf(target, depth + 1)
    }
    if (isTimestamp(undefined, schema)) return { annotation: "datetime", decode: (v) => `_d.timestamp(${v})` }
    const variants = asArray(schema["anyOf"] ?? schema["oneOf"]).map(asRecord)
    if (variants.length > 0) {
      const nonNull = variants.filter((v) => v["type"] !== "null")
      const types = nonNull.map((v) => this.typeOf(v, depth + 1))
      const nullable = nonNull.length < variants.length
      if (types.length === 1) {
        const only = types[0]!
        return { annotation: nullable ? `Optional[${only.annotation}]` : only.annotation, decode: only.decode }
      }
      // a union whose members decode differently stays JSON: which member a value is cannot be told in general
      if (types.some((t) => t.decode !== undefined)) return plain("Any")
      const annotations = [...new Set(types.map((t) => t.annotation))]
      const union = annotations.length === 1 ? annotations[0]! : `Union[${annotations.join(", ")}]`
      return plain(nullable ? `Optional[${union}]` : union)
    }
    const allOf = asArray(schema["allOf"]).map(asRecord)
    if (allOf.length === 1) return this.typeOf(allOf[0]!, depth + 1)
    const enumValues = asArray(schema["enum"])
    if (enumValues.length > 0 && enumValues.every((v) => typeof v === "string" || typeof v === "number")) {
      return plain(`Literal[${enumValues.map((v) => (typeof v === "string" ? pyString(v) : String(v))).join(", ")}]`)
    }
    if ("const" in schema && typeof schema["const"] === "string") return plain(`Literal[${pyString(schema["const"])}]`)
    switch (schema["type"]) {
      case "string":
        return plain("str")
      case "integer":
        return plain("int")
      case "number":
        return plain("float")
      case "boolean":
        return plain("bool")
      case "null":
        return plain("None")
      case "array": {
        const item = this.typeOf(asRecord(schema["items"]), depth + 1)
        const decode = item.decode
        return {
          annotation: `List[${item.annotation}]`,
          decode: decode === undefined ? undefined : (v) => `_d.array(${v}, lambda item: ${decode("item")})`
        }
      }
      case "object": {
        const extra = schema["additionalProperties"]
        if (isRecord(extra) && !isRecord(schema["properties"])) {
          const item = this.typeOf(extra, depth + 1)
          const decode = item.decode
          return {
            annotation: `Dict[str, ${item.annotation}]`,
            decode: decode === undefined ? undefined : (v) => `_d.record(${v}, lambda item: ${decode("item")})`
          }
        }
        return plain("Dict[str, Any]")
      }
      default:
        return plain("Any")
    }
  }

  /** models.py: a dataclass per named schema in `used`, and those their fields reach, in name order. */
  renderModels(header: string): string {
    const done = new Set<string>()
    const blocks: Array<string> = []
    let pending = [...this.used].filter((n) => !done.has(n))
    while (pending.length > 0) {
      for (const name of pending.sort()) {
        done.add(name)
        blocks.push(this.renderModel(name))
      }
      pending = [...this.used].filter((n) => !done.has(n))
    }
    const sorted = blocks.sort((a, b) => a.localeCompare(b))
    return [
      header,
      "from __future__ import annotations",
      "",
      "from dataclasses import dataclass, field",
      "from datetime import datetime",
      "from typing import Any, Dict, List, Literal, Optional, Union",
      "",
      "from .._core import decode as _d",
      ...sorted.map((b) => `\n\n${b}`),
      ""
    ].join("\n")
  }

  private renderModel(name: string): string {
    const schema = asRecord(this.model.schemas[name])
    const required = new Set(asArray(schema["required"]).filter((r): r is string => typeof r === "string"))
    const fields = Object.entries(asRecord(schema["properties"])).map(([wire, value]) => {
      const type = this.typeOf(asRecord(value))
      const optional = !required.has(wire) || type.annotation.startsWith("Optional[")
      const annotation = optional && !type.annotation.startsWith("Optional[") && type.annotation !== "Any"
        ? `Optional[${type.annotation}]`
        : type.annotation
      return { wire, py: snake(wire), annotation, optional, type, description: asString(asRecord(value)["description"]) }
    })
    const taken = new Set(fields.map((f) => f.py))
    const rawName = taken.has("raw") ? "raw_" : "raw"
    const ordered = [...fields.filter((f) => !f.optional), ...fields.filter((f) => f.optional)]
    const cls = pascal(name)
    const description = asString(schema["description"])
    const lines = [
      "@dataclass",
      `class ${cls}:`,
      `    """${docText(description ?? name)}"""`,
      "",
      ...ordered.flatMap((f) => [
        `    ${f.py}: ${f.annotation}${f.optional ? " = None" : ""}`,
        ...(f.description === undefined ? [] : [`    """${docText(f.description)}"""`])
      ]),
      `    ${rawName}: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)`,
      `    """the object as the server sent it, fields this client does not know included"""`,
      "",
      "    @classmethod",
      `    def from_wire(cls, data: Dict[str, Any]) -> ${cls}:`,
      "        return cls(",
      ...ordered.map((f) => {
        const value = `data.get(${pyString(f.wire)})`
        return `            ${f.py}=${f.type.decode === undefined ? value : f.type.decode(value)},`
      }),
      `            ${rawName}=data,`,
      "        )",
      "",
      "    def to_wire(self) -> Dict[str, Any]:",
      `        return dict(self.${rawName})`
    ]
    return lines.join("\n")
  }
}
