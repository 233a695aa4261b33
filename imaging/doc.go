// Package imaging owns every pixel npcorch sends to a model: reading MRI
// series (DICOM, or PNG/JPEG folders with a series.json sidecar) and
// whole-slide pathology images, the pure transforms that build NPCBench's
// inputs (plane groups, sequence panels, structure cards, CarePath pages,
// pathology overviews), and lossless PNG output.
//
// Transforms are pure and deterministic: the same input gives the same bytes.
// The batch driver (worker pool, cache, manifest) lives in imaging/prep. This
// package knows nothing of models, requests or scores.
package imaging
