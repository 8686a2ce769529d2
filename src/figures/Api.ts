import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.js"
import { LabRef } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../http/Errors.js"
import { CreateFigure, Figure, FigureId, FigureListParams, UpdateFigure } from "./Figure.js"

const FigurePath = Schema.Struct({ id: FigureId })
const LabQuery = Schema.Struct({ labId: LabRef })

/**
 * GET /figures is the catalog route; registering, reading, editing and deleting
 * one figure are extensions (docs/figures.md).
 */
export class FiguresApi extends HttpApiGroup.make("figures")
  .add(
    HttpApiEndpoint.get("list", "/figures")
      .setUrlParams(FigureListParams)
      .addSuccess(ListEnvelope(Figure))
      .annotate(OpenApi.Summary, "The lab's figures: images and PDFs of the linked repository and registered figures, newest first")
  )
  .add(
    HttpApiEndpoint.post("create", "/figures")
      .setPayload(CreateFigure)
      .addSuccess(Envelope(Figure), { status: 201 })
      .annotate(OpenApi.Summary, "Register a figure (a lab path or a URL), for instance one an experiment produced (extension)")
  )
  .add(
    HttpApiEndpoint.get("get", "/figures/:id")
      .setPath(FigurePath)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Figure))
      .annotate(OpenApi.Summary, "One figure (extension)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/figures/:id")
      .setPath(FigurePath)
      .setPayload(UpdateFigure)
      .addSuccess(Envelope(Figure))
      .annotate(OpenApi.Summary, "Change a figure's title, caption or experiment (extension)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/figures/:id")
      .setPath(FigurePath)
      .setUrlParams(LabQuery)
      .addSuccess(Envelope(Figure))
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Delete a registered figure; a git figure is deleted in the repository (extension)")
  )
  .addError(ForbiddenWire)
  .addError(NotFoundWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
