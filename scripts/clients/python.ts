/**
 * The Python client's emitter: from the model, the generated half of clients/python/lab_service — models, the
 * resource namespaces (sync and asyncio) and the two client classes — in lab_service/_generated/. The hand-written
 * runtime they call (transport, retries, errors, pagination) is lab_service/_core/, never touched here.
 */
import type { JsonSchema, Model, Operation } from "./Model.js"
import { HEADER, type Method, namespaceTree, renderClient, renderResources } from "./pythonResources.js"
import { docText, pyString, PythonTypes, snake, type PyType } from "./pythonTypes.js"

const OUT = "clients/python/lab_service/_generated"

/** Per-call options every method takes after its own arguments. */
const CALL_OPTIONS = ["timeout", "max_retries", "idempotency_key"]

interface Arg {
  readonly py: string
  readonly wire: string
  readonly where: "path" | "query" | "body"
  readonly required: boolean
  readonly type: PyType
  readonly description: string | undefined
  /** labId: the client's lab_id when the call gives none */
  readonly isLab: boolean
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const asRecord = (u: unknown): Record<string, unknown> => (isRecord(u) ? u : {})


export const renderPython = (model: Model): ReadonlyArray<{ readonly path: string; readonly text: string }> => {
  const types = new PythonTypes(model)
  const methods = model.operations.flatMap((op) => methodsOf(op, types))
  const tree = namespaceTree(methods)
  return [
    { path: `${OUT}/__init__.py`, text: `${HEADER}\n"""The generated half of the client: models, resources, LabService and AsyncLabService."""\n` },
    { path: `${OUT}/models.py`, text: types.renderModels(`${HEADER}\n"""Models of the service's answers, from its OpenAPI schemas."""`) },
    { path: `${OUT}/resources.py`, text: renderResources(tree, "sync") },
    { path: `${OUT}/async_resources.py`, text: renderResources(tree, "async") },
    { path: `${OUT}/client.py`, text: renderClient(tree, model) }
  ]
}

const argsOf = (op: Operation, types: PythonTypes): ReadonlyArray<Arg> => {
  // the model names fields as clients do (files.write's sha is expectedSha) and says what each is on the wire
  const pyName = (clientName: string) => {
    const base = snake(clientName)
    return CALL_OPTIONS.includes(base) ? `${base}_` : base
  }
  const args: Array<Arg> = []
  const param = (where: "path" | "query") => (p: Operation["pathParams"][number]) =>
    args.push({
      py: pyName(p.name),
      wire: p.wireName,
      where,
      required: p.required,
      type: types.typeOf(p.schema),
      description: p.description,
      isLab: p.wireName === "labId"
    })
  op.pathParams.forEach(param("path"))
  op.queryParams.filter((p) => p.wireName !== "cursor").forEach(param("query"))
  if (op.body !== undefined) {
    const schema = types.schemaOf(op.body.schema)
    const variants = Array.isArray(schema["anyOf"]) ? schema["anyOf"].map((v) => types.schemaOf(asRecord(v))) : [schema]
    const objects = variants.filter((v) => isRecord(v["properties"]))
    if (objects.length === variants.length) {
      // a body of several shapes takes the union of their fields; a field is required when every shape requires it
      const requiredIn = (v: Record<string, unknown>) => new Set(Array.isArray(v["required"]) ? v["required"] : [])
      const seen = new Set<string>()
      for (const variant of objects) {
        for (const [name, value] of Object.entries(asRecord(variant["properties"]))) {
          if (seen.has(name)) continue
          seen.add(name)
          const wire = op.body.wireNames[name] ?? name
          const description = asRecord(value)["description"]
          args.push({
            py: pyName(name),
            wire,
            where: "body",
            required: objects.every((v) => requiredIn(v).has(name)),
            type: types.typeOf(asRecord(value)),
            description: typeof description === "string" ? description : undefined,
            isLab: wire === "labId"
          })
        }
      }
    } else {
      args.push({ py: "body", wire: "", where: "body", required: op.body.required, type: { annotation: "Any", decode: undefined }, description: "the JSON body", isLab: false })
    }
  }
  return args
}

/** A paginated read whose answer is one thing with some query and a page without it (files.read): read, and list. */
const methodsOf = (op: Operation, types: PythonTypes): ReadonlyArray<Method> => {
  const args = argsOf(op, types)
  if (op.pagination === undefined) return [methodOf(op, op.name, args, types, "single")]
  const data = op.success.kind === "envelope" ? asRecord(op.success.data) : {}
  if (!Array.isArray(data["anyOf"])) return [methodOf(op, op.name, args, types, "page")]
  const single = data["anyOf"].map(asRecord).find((v) => v["type"] !== "array")
  const singleArgs = args.filter((a) => a.wire !== "limit" && a.wire !== "prefix").map((a) => (a.wire === "path" ? { ...a, required: true } : a))
  const listArgs = args.filter((a) => a.wire !== "path")
  return [
    methodOf(op, op.name, singleArgs, types, "single", single),
    methodOf(op, "list", listArgs, types, "page")
  ]
}

const signature = (args: ReadonlyArray<Arg>, op: Operation): ReadonlyArray<string> => {
  const positional = args.filter((a) => a.where === "path").map((a) => `${a.py}: ${a.type.annotation}`)
  const keyword = [
    ...args.filter((a) => a.where !== "path" && a.required && !a.isLab).map((a) => `${a.py}: ${a.type.annotation}`),
    ...args
      .filter((a) => a.where !== "path" && (!a.required || a.isLab))
      .map((a) => `${a.py}: ${a.type.annotation.startsWith("Optional[") || a.type.annotation === "Any" ? a.type.annotation : `Optional[${a.type.annotation}]`} = None`),
    "timeout: Optional[float] = None",
    "max_retries: Optional[int] = None",
    ...(op.isWrite ? ["idempotency_key: Optional[str] = None"] : [])
  ]
  return ["self", ...positional, "*", ...keyword]
}

const docstring = (op: Operation, args: ReadonlyArray<Arg>, indent: string, extra: ReadonlyArray<string> = []): string => {
  const prose = [op.summary, op.description].filter((s): s is string => s !== undefined && s.length > 0)
  const argLines = args
    .filter((a) => a.description !== undefined || a.isLab)
    .map((a) => `    ${a.py}: ${a.isLab ? "the lab's id or slug; the client's lab_id when not given" : a.description}`)
  const body = [
    ...prose.flatMap((p) => [p, ""]),
    `${op.method} ${op.path}`,
    ...(argLines.length > 0 ? ["", "Args:", ...argLines] : []),
    ...extra.flatMap((e) => ["", e])
  ]
  const text = docText(body.join("\n"))
    .split("\n")
    .map((line, n) => (n === 0 || line === "" ? line : `${indent}${line}`))
    .join("\n")
  return `${indent}"""${text}\n${indent}"""`
}

/** def name(a, *, b, c) on one line when short, else one parameter a line. */
const defLine = (prefix: string, name: string, params: ReadonlyArray<string>, returns: string): string => {
  const one = `    ${prefix}${name}(${params.join(", ")}) -> ${returns}:`
  return one.length <= 120 ? one : `    ${prefix}${name}(\n${params.map((p) => `        ${p},`).join("\n")}\n    ) -> ${returns}:`
}

const valueOf = (a: Arg) => (a.isLab ? "self._core.lab(lab_id)".replace("lab_id", a.py) : a.py)

const methodOf = (op: Operation, name: string, args: ReadonlyArray<Arg>, types: PythonTypes, kind: "single" | "page", data?: JsonSchema): Method => {
  const i = "        "
  let path = pyString(op.path)
  for (const a of args.filter((x) => x.where === "path")) path = `${path}.replace(${pyString(`{${a.wire}}`)}, _quote(str(${a.py}), safe=""))`
  const query = args.filter((a) => a.where === "query").map((a) => `${pyString(a.wire)}: ${valueOf(a)}`)
  const bodyArgs = args.filter((a) => a.where === "body")
  const body =
    bodyArgs.length === 1 && bodyArgs[0]!.wire === ""
      ? "_d.wire(body)"
      : bodyArgs.length > 0
        ? `_d.body({${bodyArgs.map((a) => `${pyString(a.wire)}: ${valueOf(a)}`).join(", ")}})`
        : undefined
  const call = (cursor: boolean) =>
    [
      `${pyString(op.method)}, ${path}`,
      `query={${[...query, ...(cursor ? ['"cursor": cursor'] : [])].join(", ")}}`,
      ...(body === undefined ? [] : [`body=${body}`]),
      "timeout=timeout",
      "max_retries=max_retries",
      ...(op.isWrite ? ["idempotency_key=idempotency_key"] : [])
    ].join(", ")
  const pyName = snake(name)
  const sig = signature(args, op)
  if (kind === "page") {
    const item = types.typeOf(op.pagination!.item)
    const decodeItem = item.decode === undefined ? "lambda item: item" : `lambda item: ${item.decode("item")}`
    const pageBody = (flavour: "sync" | "async") => {
      const [def, wait, paginator] = flavour === "sync" ? ["def", "", "Paginator"] : ["async def", "await ", "AsyncPaginator"]
      return [
        defLine("def ", pyName, [...sig, "cursor: Optional[str] = None"], `${paginator}[${item.annotation}]`),
        docstring(op, args, i, ["Iterate the result for every item across pages, or call first_page() for one page."]),
        `${i}${def} fetch(cursor: Optional[str]) -> Page[${item.annotation}]:`,
        `${i}    response = ${wait}self._core.request(${call(true)})`,
        `${i}    return page_of(response, ${decodeItem})`,
        `${i}return ${paginator}(fetch, cursor)`
      ].join("\n")
    }
    return { namespace: op.namespace, name: pyName, text: { sync: pageBody("sync"), async: pageBody("async") } }
  }
  const answer =
    op.success.kind === "envelope"
      ? types.typeOf(data ?? op.success.data)
      : op.success.kind === "bare"
        ? types.typeOf(op.success.data)
        : { annotation: op.success.kind === "text" ? "str" : "bytes", decode: undefined }
  const raw = op.success.kind === "envelope" ? `_data(response)` : "response.body"
  const result = answer.decode === undefined ? raw : answer.decode(raw)
  const single = (flavour: "sync" | "async") =>
    [
      defLine(flavour === "sync" ? "def " : "async def ", pyName, sig, answer.annotation),
      docstring(op, args, i),
      `${i}response = ${flavour === "sync" ? "" : "await "}self._core.request(${call(false)})`,
      `${i}return ${result}`
    ].join("\n")
  return { namespace: op.namespace, name: pyName, text: { sync: single("sync"), async: single("async") } }
}
