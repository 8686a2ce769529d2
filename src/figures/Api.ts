import * as OpenApi from "@effect/platform/OpenApi"
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
  docs: {
    list: {
      summary: "List figures",
      description: "The lab's figures, newest first: the images and PDFs of the linked repository (`source: git`, found by each pull) and the figures registered through the API (`source: api`), filtered by `source`, `experimentId` and creation time."
    },
    create: {
      summary: "Register a figure",
      description: "Extension. Registers a figure at a lab `path` or an http(s) `url`, with a title, an optional caption and the experiment that produced it."
    },
    get: {
      summary: "Get a figure",
      description: "Extension. One figure by id."
    },
    update: {
      summary: "Update a figure",
      description: "Extension. Changes the title, caption or experiment of any figure, a git one included (`null` clears caption or experiment)."
    },
    delete: {
      summary: "Delete a figure",
      description: "Extension. Removes a registered figure. A figure from the linked repository is 409: delete its file in git and the next pull removes it."
    }
  },
  conflicts: ["delete"]
})
  .pipe(labGroup)
  .annotate(OpenApi.Description, "The lab's figures: images and PDFs of the linked repository, plus figures registered through the API.") {}
