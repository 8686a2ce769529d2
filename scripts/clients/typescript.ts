/** The TypeScript client's emitter (filled in by the next commit). */
import type { Model } from "./Model.js"

export const renderTypeScript = (_model: Model): ReadonlyArray<{ readonly path: string; readonly text: string }> => []
