import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ConflictWire } from "../http/Errors.js"
import { createIn, deleteById, getById, labGroup, listOf, updateById } from "../http/LabEndpoints.js"
import { CreateFigure, Figure, FigureId, FigureListParams, UpdateFigure } from "./Figure.js"

const FigurePath = Schema.Struct({ id: FigureId })

/**
 * GET /figures is the catalog route; registering, reading, editing and deleting
 * one figure are extensions (docs/figures.md).
 */
export class FiguresApi extends HttpApiGroup.make("figures")
  .add(
    listOf("/figures", FigureListParams, Figure).annotate(
      OpenApi.Summary,
      "The lab's figures: images and PDFs of the linked repository and registered figures, newest first"
    )
  )
  .add(
    createIn("/figures", CreateFigure, Figure).annotate(
      OpenApi.Summary,
      "Register a figure (a lab path or a URL), for instance one an experiment produced (extension)"
    )
  )
  .add(getById("/figures/:id", FigurePath, Figure).annotate(OpenApi.Summary, "One figure (extension)"))
  .add(
    updateById("/figures/:id", FigurePath, UpdateFigure, Figure).annotate(
      OpenApi.Summary,
      "Change a figure's title, caption or experiment (extension)"
    )
  )
  .add(
    deleteById("/figures/:id", FigurePath, Figure)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Delete a registered figure; a git figure is deleted in the repository (extension)")
  )
  .pipe(labGroup) {}
