// Package prep is a batch executor of image jobs: each job names an output
// PNG and a drawing (an overview of a slide, a grid of slice tiles, a
// plane group) with its inputs; prep renders the jobs with package imaging
// on a bounded worker pool, writes the PNGs, and returns each one's path,
// sha256, size and geometry, or why it could not be made.
//
// Work is content-addressed: each output's cache key hashes its input
// bytes, its drawing and the preparation parameters, so a rerun skips what
// is done and an interrupted run resumes. Outputs are byte-identical across
// runs and worker counts.
//
// A slice shown by several outputs is resized once: the series read
// through an Executor share an imaging.TileCache, bounded by
// tileCacheBytesPerWorker; each batch of jobs announces its tiles before
// any of them runs, and a batch's jobs run in order of slice position, so
// a shared tile is dropped soon after it is made. Report.TilesShown and
// TilesResized tell how much was shared. Batches are taken one by one as
// the pool drains, so only the batches in flight hold decoded slices.
//
// prep knows no dataset and no task: which images a benchmark needs, and
// what they mean, is the caller's (tasks/prepare). It owns the output
// folder only: it never writes inside the input root, never reads a path
// out of it, and draws no pixel itself (package imaging does).
package prep
