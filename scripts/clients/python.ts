/**
 * The Python client's emitter. A stub until the Python client lands: it makes
 * no files, so `npm run clients` writes only the TypeScript client.
 */
import type { Model } from "./Model.js"

export const renderPython = (_model: Model): ReadonlyArray<{ readonly path: string; readonly text: string }> => []
