import { Schema } from "effect"
import { labGroup, labResource } from "../http/LabEndpoints.js"
import { CreateFigure, Figure, FigureId, FigureListParams, UpdateFigure } from "./Figure.js"

/**
 * GET /figures is the catalog route; registering, reading, editing and deleting
 * one figure are extensions (docs/figures.md).
 */
export class FiguresApi extends labResource("figures", {
  path: "/figures",
  params: Schema.Struct({ id: FigureId }),
  query: FigureListParams,
  item: Figure,
  create: CreateFigure,
  update: UpdateFigure,
  summaries: {
    list: "The lab's figures: images and PDFs of the linked repository and registered figures, newest first",
    create: "Register a figure (a lab path or a URL), for instance one an experiment produced (extension)",
    get: "One figure (extension)",
    update: "Change a figure's title, caption or experiment (extension)",
    delete: "Delete a registered figure; a git figure is deleted in the repository (extension)"
  },
  conflicts: ["delete"]
}).pipe(labGroup) {}
