// Package prep is the batch driver of `npcorch prep`: it reads a raw
// dataset (dataset.json, MRI series folders, pathology slides), plans every
// image the benchmark needs per patient and cohort, renders them with
// package imaging on a bounded worker pool, and writes the PNGs and the
// prepared manifest (dataset.Prepared) with the sha256 of every file.
//
// Work is content-addressed: each output's cache key hashes its input
// bytes and the preparation parameters, so a rerun skips what is done and
// an interrupted run resumes. Outputs are byte-identical across runs and
// worker counts.
//
// A slice shown by several outputs (T and N plane groups, CarePath pages,
// panels, cards) is resized once: the run shares an imaging.TileCache,
// bounded by tileCacheBytesPerWorker, between all outputs, announces each
// output's tiles before it runs, and runs a patient's outputs in order of
// slice position, so a shared tile is dropped soon after it is made.
// Report.TilesShown and TilesResized tell how much was shared.
//
// prep owns the output folder only: it never writes inside the dataset,
// never follows a path out of the dataset root, and draws no pixel itself
// (package imaging does).
package prep
