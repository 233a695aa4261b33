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
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// Version is part of every cache key; bump it when rendering changes.
const Version = "npcorch-prep/1"

// ManifestName is the prepared manifest's file name inside Out.
const ManifestName = "manifest.json"

// tileCacheBytesPerWorker bounds the resized tiles outputs share, per
// worker (64 tiles of 512×512): tiles reused beyond the bound are resized
// again. Units run patient by patient, ordered by slice position, so most
// reuse happens within a few tiles' time.
const tileCacheBytesPerWorker = 16 << 20

// cacheDir holds one record per finished output, named by its cache key.
const cacheDir = ".cache"

// Options configures a preparation run.
type Options struct {
	// Dataset is the folder holding dataset.json.
	Dataset string
	// Out is the output folder (created if missing).
	Out string
	// Workers bounds concurrent renders; 0 means all cores.
	Workers int
	// Strict stops at the first per-file error instead of reporting it.
	Strict bool
	// Progress receives a progress bar when it is a terminal, plain lines
	// otherwise; nil is silent.
	Progress io.Writer
	// Params are the image parameters; the zero value means
	// imaging.DefaultParams().
	Params imaging.Params
	// Limits bound input images; the zero value means imaging.DefaultLimits.
	Limits imaging.Limits
	// External decodes DICOM the Go reader cannot; nil looks for dcmtk on
	// PATH (imaging.FindDCMTK).
	External imaging.ExternalDecoder
}

// Report tells what a run did.
type Report struct {
	// Outputs is the number of images in the manifest.
	Outputs int
	// Written were rendered in this run; Cached were already done.
	Written, Cached int
	// Errors are the outputs that failed, with path and reason.
	Errors []FileError
	// Warnings are non-fatal findings, such as plane groups dropped because
	// a sequence had no slice close enough.
	Warnings []string
	// Hints say once what to do about a cause many errors share (such as
	// dcmtk missing for compressed DICOM).
	Hints []string
	// TilesShown counts the slice tiles the outputs rendered in this run
	// show; TilesResized counts the resizes that made them (fewer, since
	// outputs share tiles through the run's imaging.TileCache).
	TilesShown, TilesResized int
}

// ErrInterrupted is Run's error when its context ends before the run
// does: finished images are cached, and no manifest is written.
var ErrInterrupted = errors.New("prep interrupted: finished images are cached; run again to resume")

// FileError is one output that could not be made.
type FileError struct {
	// Patient and Output name the image (Output relative to Out).
	Patient, Output string
	Err             error
}

// Error names the patient, the output and the reason.
func (e FileError) Error() string {
	return fmt.Sprintf("patient %s: %s: %v", e.Patient, e.Output, e.Err)
}

// Unwrap returns the reason.
func (e FileError) Unwrap() error { return e.Err }

var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// unit is one output image to make.
type unit struct {
	patient string
	rel     string // output path relative to Out
	desc    string // what the image is: part of the cache key
	inputs  []string
	render  func(ctx context.Context) (image.Image, error)
	place   func(img dataset.Image) // stores the result in the manifest
	planErr error
	tiles   []tileUse // the slice tiles render uses, announced to their series' TileCache
	// man is the patient's manifest entry, where a failure is recorded;
	// failure says what the output is (Kind and labels).
	man     *dataset.PreparedPatient
	failure dataset.Failure
}

// tileUse is one slice tile an output shows.
type tileUse struct {
	series *imaging.Series
	index  int
}

// expectTiles announces the unit's tile uses, so that a tile several
// outputs show is resized once and kept only until its last use.
func (r *runner) expectTiles(u *unit) {
	for _, t := range u.tiles {
		if t.series.Tiles != nil {
			t.series.Tiles.Expect(t.series, t.index, r.params.Tile)
		}
	}
}

// orderBySlice orders a patient's units by where their slices sit in
// their series (the mean relative index), so outputs sharing tiles run
// close together and each shared tile is dropped soon after it is made.
// The order changes no output: each unit fills its own manifest slot.
func orderBySlice(units []*unit) {
	at := make(map[*unit]float64, len(units))
	for _, u := range units {
		sum := 0.0
		for _, t := range u.tiles {
			sum += float64(t.index) / float64(len(t.series.Meta.Slices))
		}
		if len(u.tiles) > 0 {
			at[u] = sum / float64(len(u.tiles))
		}
	}
	slices.SortStableFunc(units, func(a, b *unit) int { return cmp.Compare(at[a], at[b]) })
}

// forgoTiles withdraws the unit's tile uses when it will not render.
func (r *runner) forgoTiles(u *unit) {
	for _, t := range u.tiles {
		if t.series.Tiles != nil {
			t.series.Tiles.Forgo(t.series, t.index, r.params.Tile)
		}
	}
}

// cacheRecord is what a finished output leaves under .cache.
type cacheRecord struct {
	Key   string        `json:"key"`
	Image dataset.Image `json:"image"`
}

// Run prepares every image of the dataset in opt.Dataset into opt.Out and
// writes Out/manifest.json. Per-file failures are collected in the report
// and recorded in the manifest (PreparedPatient.Failed; its image lists
// hold only the images made) unless opt.Strict, where the first one ends
// the run with an error and no manifest. A cancelled context stops the
// run with ErrInterrupted; finished outputs stay cached for the next run.
func Run(ctx context.Context, opt Options) (*dataset.Prepared, *Report, error) {
	params := opt.Params
	if params.Tile == 0 {
		params = imaging.DefaultParams()
	}
	if err := params.Validate(); err != nil {
		return nil, nil, fmt.Errorf("prep: parameters: %w", err)
	}
	limits := opt.Limits
	if limits == (imaging.Limits{}) {
		limits = imaging.DefaultLimits
	}
	ext := opt.External
	if ext == nil {
		ext = imaging.FindDCMTK()
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opt.Dataset == "" || opt.Out == "" {
		return nil, nil, errors.New("prep: both the dataset folder and the output folder are required")
	}
	root, err := os.OpenRoot(opt.Dataset)
	if err != nil {
		return nil, nil, fmt.Errorf("prep: open dataset folder: %w", err)
	}
	defer root.Close()
	fsys := root.FS()
	rawBytes, err := fs.ReadFile(fsys, "dataset.json")
	if err != nil {
		return nil, nil, fmt.Errorf("prep: %w (the dataset folder must hold dataset.json; make one with `npcorch synth`)", err)
	}
	var raw dataset.Raw
	dec := json.NewDecoder(bytes.NewReader(rawBytes))
	dec.DisallowUnknownFields() // a misspelt key must not prepare nothing in silence
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("prep: %s: %w", filepath.Join(opt.Dataset, "dataset.json"), err)
	}
	if raw.Format != dataset.RawFormat {
		return nil, nil, fmt.Errorf("prep: %s: format %q, want %q", filepath.Join(opt.Dataset, "dataset.json"), raw.Format, dataset.RawFormat)
	}
	if err := os.MkdirAll(filepath.Join(opt.Out, cacheDir), 0o755); err != nil {
		return nil, nil, fmt.Errorf("prep: output folder: %w", err)
	}
	paramsJSON, _ := json.Marshal(struct {
		Version string
		Params  imaging.Params
		Limits  imaging.Limits
		PNG     int
	}{Version, params, limits, imaging.PNGLevel})
	dsum := sha256.Sum256(rawBytes)
	psum := sha256.Sum256(paramsJSON)
	man := &dataset.Prepared{
		Format: dataset.PreparedFormat, Dataset: raw.Name,
		DatasetSHA256: hex.EncodeToString(dsum[:]), ParamsSHA256: hex.EncodeToString(psum[:]),
		Patients: make([]dataset.PreparedPatient, len(raw.Patients)),
	}
	r := &runner{
		opt: opt, params: params, paramsJSON: paramsJSON, fsys: fsys,
		readOpt: imaging.ReadOptions{Limits: limits, External: ext,
			Tiles: imaging.NewTileCache(int64(workers) * tileCacheBytesPerWorker)},
		report: &Report{}, hashes: map[string]string{},
		progress: newProgress(opt.Progress),
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	// Patients are planned one by one as the pool drains, so only the
	// patients in flight hold decoded slices.
	for i := range raw.Patients {
		if gctx.Err() != nil {
			break
		}
		units := r.plan(&raw.Patients[i], &man.Patients[i], limits)
		r.progress.add(len(units))
		for _, u := range units {
			r.expectTiles(u)
		}
		orderBySlice(units)
		for _, u := range units {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error { return r.do(gctx, u) })
		}
	}
	werr := g.Wait()
	r.progress.done()
	_, r.report.TilesResized = r.readOpt.Tiles.Stats()
	slices.SortStableFunc(r.report.Errors, func(a, b FileError) int { return cmp.Compare(a.Output, b.Output) })
	if ctx.Err() != nil {
		return nil, r.report, ErrInterrupted
	}
	if werr != nil {
		return nil, r.report, fmt.Errorf("prep: %w", werr)
	}
	r.report.Hints = hints(r.report.Errors)
	for i := range man.Patients {
		compact(&man.Patients[i])
		r.report.Outputs += count(man.Patients[i])
	}
	if err := writeManifest(opt.Out, man); err != nil {
		return nil, r.report, err
	}
	return man, r.report, nil
}

// hints says once what to do about causes several errors share.
func hints(errs []FileError) []string {
	n := 0
	for _, e := range errs {
		if errors.Is(e, imaging.ErrNeedsDCMTK) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d images need dcmtk to decompress DICOM: install it (Debian: apt-get install dcmtk) and run prep again", n)}
}

// compact drops the slots of outputs that failed (reported in Errors and
// listed in Failed, by path), so the image lists hold only files that
// exist.
func compact(p *dataset.PreparedPatient) {
	slices.SortStableFunc(p.Failed, func(a, b dataset.Failure) int { return cmp.Compare(a.Path, b.Path) })
	p.Panels = slices.DeleteFunc(p.Panels, func(x dataset.Panel) bool { return x.Path == "" })
	p.Cards = slices.DeleteFunc(p.Cards, func(x dataset.Card) bool { return x.Path == "" })
	p.TGroups = slices.DeleteFunc(p.TGroups, func(x dataset.PlaneGroup) bool { return x.Path == "" })
	p.NGroups = slices.DeleteFunc(p.NGroups, func(x dataset.PlaneGroup) bool { return x.Path == "" })
	p.Pages = slices.DeleteFunc(p.Pages, func(x dataset.Image) bool { return x.Path == "" })
}

func count(p dataset.PreparedPatient) int {
	n := len(p.Panels) + len(p.Cards) + len(p.TGroups) + len(p.NGroups) + len(p.Pages)
	if p.Overview != nil {
		n++
	}
	return n
}

func writeManifest(out string, man *dataset.Prepared) error {
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("prep: manifest: %w", err)
	}
	data = append(data, '\n')
	name := filepath.Join(out, ManifestName)
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := writeAtomic(name, data); err != nil {
		return fmt.Errorf("prep: manifest: %w", err)
	}
	return nil
}

// writeAtomic writes data to name through a temporary file and a rename,
// so an interrupted run never leaves a half-written file under name. The
// file is created as any file is: mode 0666 less the umask.
func writeAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(name))
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// createTemp creates a new file .tmp-RANDOM in dir with mode 0666 less
// the umask (os.CreateTemp would make it 0600 whatever the umask).
func createTemp(dir string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".tmp-%016x", rand.Uint64()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("create a temporary file in %s: 100 names taken", dir)
}

type runner struct {
	opt        Options
	params     imaging.Params
	paramsJSON []byte
	fsys       fs.FS
	readOpt    imaging.ReadOptions
	progress   *progress
	png        imaging.PNGEncoder // adaptive filters, as EncodePNG; pools zlib writers

	mu     sync.Mutex
	report *Report
	hashes map[string]string
	manMu  sync.Mutex
}

func (r *runner) fail(u *unit, err error) error {
	fe := FileError{Patient: u.patient, Output: u.rel, Err: err}
	r.mu.Lock()
	r.report.Errors = append(r.report.Errors, fe)
	r.mu.Unlock()
	if u.man != nil {
		f := u.failure
		f.Path, f.Reason = u.rel, err.Error()
		r.manMu.Lock()
		u.man.Failed = append(u.man.Failed, f)
		r.manMu.Unlock()
	}
	r.progress.step(false, true)
	if r.opt.Strict {
		return fe
	}
	return nil
}

// do makes one output: cache lookup, render, encode, write, record.
func (r *runner) do(ctx context.Context, u *unit) error {
	if u.planErr != nil {
		return r.fail(u, u.planErr)
	}
	key, err := r.key(u)
	if err != nil {
		r.forgoTiles(u)
		return r.fail(u, err)
	}
	if img, ok := r.cached(u, key); ok {
		r.forgoTiles(u)
		r.place(u, img)
		r.mu.Lock()
		r.report.Cached++
		r.mu.Unlock()
		r.progress.step(true, false)
		return nil
	}
	r.mu.Lock()
	r.report.TilesShown += len(u.tiles)
	r.mu.Unlock()
	m, err := u.render(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return r.fail(u, err)
	}
	var buf bytes.Buffer
	if err := r.png.Encode(&buf, m); err != nil {
		return r.fail(u, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	img := dataset.Image{Path: u.rel, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(buf.Len()),
		Width: m.Bounds().Dx(), Height: m.Bounds().Dy()}
	if err := writeAtomic(filepath.Join(r.opt.Out, filepath.FromSlash(u.rel)), buf.Bytes()); err != nil {
		return r.fail(u, fmt.Errorf("write: %w", err))
	}
	rec, _ := json.Marshal(cacheRecord{Key: key, Image: img})
	if err := writeAtomic(r.recordPath(key), rec); err != nil {
		return r.fail(u, fmt.Errorf("write cache record: %w", err))
	}
	r.place(u, img)
	r.mu.Lock()
	r.report.Written++
	r.mu.Unlock()
	r.progress.step(false, false)
	return nil
}

func (r *runner) place(u *unit, img dataset.Image) {
	r.manMu.Lock()
	u.place(img)
	r.manMu.Unlock()
}

func (r *runner) recordPath(key string) string {
	return filepath.Join(r.opt.Out, cacheDir, key[:2], key+".json")
}

// cached returns the recorded image when the record exists and the file
// under Out still has the recorded size and sha256.
func (r *runner) cached(u *unit, key string) (dataset.Image, bool) {
	data, err := os.ReadFile(r.recordPath(key))
	if err != nil {
		return dataset.Image{}, false
	}
	var rec cacheRecord
	if json.Unmarshal(data, &rec) != nil || rec.Key != key || rec.Image.Path != u.rel {
		return dataset.Image{}, false
	}
	out, err := os.ReadFile(filepath.Join(r.opt.Out, filepath.FromSlash(u.rel)))
	if err != nil || int64(len(out)) != rec.Image.Bytes {
		return dataset.Image{}, false
	}
	sum := sha256.Sum256(out)
	if hex.EncodeToString(sum[:]) != rec.Image.SHA256 {
		return dataset.Image{}, false
	}
	return rec.Image, true
}

// key hashes the version, parameters, output path, description and the
// bytes of every input file.
func (r *runner) key(u *unit) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", Version, r.paramsJSON, u.rel, u.desc)
	for _, in := range u.inputs {
		sum, err := r.fileHash(in)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", in, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (r *runner) fileHash(name string) (string, error) {
	r.mu.Lock()
	sum, ok := r.hashes[name]
	r.mu.Unlock()
	if ok {
		return sum, nil
	}
	f, err := r.fsys.Open(name)
	if err != nil {
		return "", fmt.Errorf("input %s: %w", name, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("input %s: %w", name, err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	r.mu.Lock()
	r.hashes[name] = sum
	r.mu.Unlock()
	return sum, nil
}

func (r *runner) warn(msg string) {
	r.mu.Lock()
	r.report.Warnings = append(r.report.Warnings, msg)
	r.mu.Unlock()
}

// outPath joins a patient folder and a file name.
func outPath(pid, name string) string { return path.Join(pid, name) }
