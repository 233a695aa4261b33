package prep

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/npcorch/npcorch/imaging"
)

// Version is part of every cache key; bump it when rendering changes.
const Version = "npcorch-prep/1"

// tileCacheBytesPerWorker bounds the resized tiles outputs share, per
// worker (64 tiles of 512×512): tiles reused beyond the bound are resized
// again. Jobs run batch by batch, ordered by slice position, so most
// reuse happens within a few tiles' time.
const tileCacheBytesPerWorker = 16 << 20

// cacheDir holds one record per finished output, named by its cache key.
const cacheDir = ".cache"

// Options configures an Executor.
type Options struct {
	// Root is the folder the jobs' inputs are named in; nothing outside
	// it is read.
	Root string
	// Out is the output folder (created if missing).
	Out string
	// Workers bounds concurrent renders; 0 means all cores.
	Workers int
	// Strict stops at the first failed job instead of recording it.
	Strict bool
	// Progress receives a progress bar when it is a terminal, plain lines
	// otherwise; nil is silent.
	Progress io.Writer
	// Params are the image parameters; the zero value means
	// imaging.DefaultParams().
	Params imaging.Params
	// Limits bound input images; the zero value means imaging.DefaultLimits.
	Limits imaging.Limits
	// External decodes DICOM the Go reader cannot; nil looks for dcmtk and
	// GDCM on PATH (imaging.FindDecompressTools).
	External imaging.ExternalDecoder
}

// Executor makes output images from jobs. It owns the output folder, its
// cache records and the tile cache its series share. Make one with New,
// read the jobs' series through it, Run the jobs once, and Close it.
type Executor struct {
	opt        Options
	params     imaging.Params
	limits     imaging.Limits
	paramsJSON []byte
	workers    int
	root       *os.Root
	fsys       fs.FS
	readOpt    imaging.ReadOptions
	png        imaging.PNGEncoder // adaptive filters, as EncodePNG; pools zlib writers

	ran    atomic.Bool
	mu     sync.Mutex
	hashes map[string]string // input file → sha256, read once
}

// New checks the options, opens the root and makes the output folder.
func New(opt Options) (*Executor, error) {
	params := opt.Params
	if params.Tile == 0 {
		params = imaging.DefaultParams()
	}
	if err := params.Validate(); err != nil {
		return nil, fmt.Errorf("prep: parameters: %w", err)
	}
	limits := opt.Limits
	if limits == (imaging.Limits{}) {
		limits = imaging.DefaultLimits
	}
	ext := opt.External
	if ext == nil {
		ext = imaging.FindDecompressTools()
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opt.Root == "" || opt.Out == "" {
		return nil, errors.New("prep: both the input folder and the output folder are required")
	}
	root, err := os.OpenRoot(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("prep: open input folder: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(opt.Out, cacheDir), 0o755); err != nil {
		root.Close()
		return nil, fmt.Errorf("prep: output folder: %w", err)
	}
	paramsJSON, _ := json.Marshal(struct {
		Version string
		Params  imaging.Params
		Limits  imaging.Limits
		PNG     int
	}{Version, params, limits, imaging.PNGLevel})
	return &Executor{
		opt: opt, params: params, limits: limits, paramsJSON: paramsJSON, workers: workers,
		root: root, fsys: root.FS(),
		readOpt: imaging.ReadOptions{Limits: limits, External: ext,
			Tiles: imaging.NewTileCache(int64(workers) * tileCacheBytesPerWorker)},
		hashes: map[string]string{},
	}, nil
}

// Close releases the root.
func (e *Executor) Close() error { return e.root.Close() }

// Params are the image parameters every job is drawn with.
func (e *Executor) Params() imaging.Params { return e.params }

// ParamsSHA256 is the sha256 of the preparation parameters (version,
// image parameters, limits, PNG level), part of every cache key.
func (e *Executor) ParamsSHA256() string {
	sum := sha256.Sum256(e.paramsJSON)
	return hex.EncodeToString(sum[:])
}

// ReadSeries reads the series in folder dir of the root (imaging.ReadSeries)
// for jobs to show: its tiles go through the executor's tile cache.
func (e *Executor) ReadSeries(dir, sequence string) (*imaging.Series, error) {
	return imaging.ReadSeries(e.fsys, dir, sequence, e.readOpt)
}

// ReadDICOMFiles reads a series given as a list of DICOM files under Root
// (a PACS export keeps several series in one folder), as ReadSeries does
// a folder.
func (e *Executor) ReadDICOMFiles(files []string, sequence string) (*imaging.Series, error) {
	return imaging.ReadDICOMFiles(e.fsys, files, sequence, e.readOpt)
}

// Image is one output PNG: its path under Out, sha256, size and geometry.
type Image struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// Result is what became of one job: its image, or why there is none.
type Result struct {
	Image Image
	Err   error
}

// Report tells what a run did.
type Report struct {
	// Outputs is the number of images made or found in the cache.
	Outputs int
	// Written were rendered in this run; Cached were already done.
	Written, Cached int
	// Errors are the jobs that failed, with output and reason, sorted by
	// output.
	Errors []FileError
	// Hints say once what to do about a cause many errors share (such as
	// dcmtk missing for compressed DICOM).
	Hints []string
	// TilesShown counts the slice tiles the outputs rendered in this run
	// show; TilesResized counts the resizes that made them (fewer, since
	// outputs share tiles through the tile cache).
	TilesShown, TilesResized int
}

// ErrInterrupted is Run's error when its context ends before the run
// does: finished images are cached.
var ErrInterrupted = errors.New("prep interrupted: finished images are cached; run again to resume")

// FileError is one output that could not be made.
type FileError struct {
	// Owner and Output name the image (Output relative to Out).
	Owner, Output string
	Err           error
}

// Error names the owner, the output and the reason.
func (e FileError) Error() string {
	if e.Owner == "" {
		return fmt.Sprintf("%s: %v", e.Output, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Owner, e.Output, e.Err)
}

// Unwrap returns the reason.
func (e FileError) Unwrap() error { return e.Err }

// cacheRecord is what a finished output leaves under .cache.
type cacheRecord struct {
	Key   string `json:"key"`
	Image Image  `json:"image"`
}

// Run makes the images of every job, batch by batch as batches yields
// them, on a bounded pool of workers, and returns one Result per job in
// the order the jobs came. A batch is planned only when the pool takes it,
// so only the batches in flight hold their series' slices; its tiles are
// announced to the tile cache before any of its jobs runs, and its jobs
// run in order of slice position, so a tile several outputs show is
// resized once and dropped soon after.
//
// A failed job is reported in Errors and its Result, and the run goes on,
// unless Options.Strict: then the first failure ends the run with an
// error. A cancelled context ends it with ErrInterrupted; finished images
// stay cached for the next run. Run may be called once.
func (e *Executor) Run(ctx context.Context, batches iter.Seq[[]Job]) ([]Result, *Report, error) {
	if e.ran.Swap(true) {
		return nil, nil, errors.New("prep: an executor runs once; make a new one")
	}
	r := &run{e: e, report: &Report{}, progress: newProgress(e.opt.Progress), outputs: map[string]bool{}}
	_, made := e.readOpt.Tiles.Stats()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.workers)
	var results [][]Result
	for batch := range batches {
		if gctx.Err() != nil {
			break
		}
		res := make([]Result, len(batch))
		results = append(results, res)
		r.progress.add(len(batch))
		order, refused := r.schedule(batch)
		for _, i := range order {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error {
				if refused[i] != nil {
					return r.fail(&batch[i], &res[i], refused[i])
				}
				return r.do(gctx, &batch[i], &res[i])
			})
		}
	}
	werr := g.Wait()
	r.progress.done()
	_, madeAfter := e.readOpt.Tiles.Stats()
	r.report.TilesResized = madeAfter - made
	slices.SortStableFunc(r.report.Errors, func(a, b FileError) int { return cmp.Compare(a.Output, b.Output) })
	if ctx.Err() != nil {
		return nil, r.report, ErrInterrupted
	}
	if werr != nil {
		return nil, r.report, fmt.Errorf("prep: %w", werr)
	}
	r.report.Hints = hints(r.report.Errors)
	r.report.Outputs = r.report.Written + r.report.Cached
	return slices.Concat(results...), r.report, nil
}

// run is the state of one Run that its workers share.
type run struct {
	e        *Executor
	progress *progress
	outputs  map[string]bool // outputs taken, owned by Run's goroutine

	mu     sync.Mutex
	report *Report
}

// schedule announces a batch's tile uses, so that a tile several outputs
// show is resized once and kept only until its last use, and returns the
// order to run its jobs in: by where their slices sit in their series
// (the mean relative index), so outputs sharing tiles run close together.
// The order changes no output. refused[i] says why job i cannot run: its
// own check, or another job of the run having its output already.
func (r *run) schedule(batch []Job) (order []int, refused []error) {
	at := make([]float64, len(batch))
	refused = make([]error, len(batch))
	for i := range batch {
		j := &batch[i]
		if refused[i] = j.check(); refused[i] != nil {
			continue
		}
		if r.outputs[j.Output] {
			refused[i] = fmt.Errorf("another job of this run makes %s already", j.Output)
			continue
		}
		r.outputs[j.Output] = true
		sum, tiles := 0.0, j.Draw.tiles()
		for _, t := range tiles {
			if t.series.Tiles != nil {
				t.series.Tiles.Expect(t.series, t.index, r.e.params.Tile)
			}
			sum += float64(t.index) / float64(len(t.series.Meta.Slices))
		}
		if len(tiles) > 0 {
			at[i] = sum / float64(len(tiles))
		}
	}
	order = make([]int, len(batch))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	return order, refused
}

// forgoTiles withdraws the job's tile uses when it will not render.
func (r *run) forgoTiles(j *Job) {
	for _, t := range j.Draw.tiles() {
		if t.series.Tiles != nil {
			t.series.Tiles.Forgo(t.series, t.index, r.e.params.Tile)
		}
	}
}

func (r *run) fail(j *Job, res *Result, err error) error {
	fe := FileError{Owner: j.Owner, Output: j.Output, Err: err}
	res.Err = err
	r.mu.Lock()
	r.report.Errors = append(r.report.Errors, fe)
	r.mu.Unlock()
	r.progress.step(false, true)
	if r.e.opt.Strict {
		return fe
	}
	return nil
}

// do makes one output: cache lookup, render, encode, write, record.
func (r *run) do(ctx context.Context, j *Job, res *Result) error {
	key, err := r.e.key(j)
	if err != nil {
		r.forgoTiles(j)
		return r.fail(j, res, err)
	}
	if img, ok := r.e.cached(j.Output, key); ok {
		r.forgoTiles(j)
		res.Image = img
		r.mu.Lock()
		r.report.Cached++
		r.mu.Unlock()
		r.progress.step(true, false)
		return nil
	}
	r.mu.Lock()
	r.report.TilesShown += len(j.Draw.tiles())
	r.mu.Unlock()
	m, err := j.Draw.draw(ctx, r.e)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return r.fail(j, res, err)
	}
	img, err := r.e.write(j.Output, key, m)
	if err != nil {
		return r.fail(j, res, err)
	}
	res.Image = img
	r.mu.Lock()
	r.report.Written++
	r.mu.Unlock()
	r.progress.step(false, false)
	return nil
}

// write encodes m as PNG into Out/output and records it under key.
func (e *Executor) write(output, key string, m image.Image) (Image, error) {
	var buf bytes.Buffer
	if err := e.png.Encode(&buf, m); err != nil {
		return Image{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	img := Image{Path: output, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(buf.Len()),
		Width: m.Bounds().Dx(), Height: m.Bounds().Dy()}
	if err := writeAtomic(filepath.Join(e.opt.Out, filepath.FromSlash(output)), buf.Bytes()); err != nil {
		return Image{}, fmt.Errorf("write: %w", err)
	}
	rec, _ := json.Marshal(cacheRecord{Key: key, Image: img})
	if err := writeAtomic(e.recordPath(key), rec); err != nil {
		return Image{}, fmt.Errorf("write cache record: %w", err)
	}
	return img, nil
}

// hints says once, per program, what to do about images that need a
// decompressing program that is not installed.
func hints(errs []FileError) []string {
	counts := map[string]int{}
	var order []*imaging.MissingToolError
	for _, e := range errs {
		var m *imaging.MissingToolError
		if !errors.As(e, &m) {
			continue
		}
		if counts[m.Package] == 0 {
			order = append(order, m)
		}
		counts[m.Package]++
	}
	var out []string
	for _, m := range order {
		what := m.Package // dcmtk: several of its programs
		if m.Package != "dcmtk" {
			what = m.Tool
		}
		out = append(out, fmt.Sprintf("%d images need %s to decompress DICOM: install it (Debian: apt-get install %s) and run prep again", counts[m.Package], what, m.Package))
	}
	return out
}
