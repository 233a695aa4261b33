package prep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
)

// The tests draw from a root of imagingtest series: per patient k the six
// series in Pk/<sequence> and a slide Pk/slide.png. Jobs are made here by
// hand, as any caller would make them; which images a benchmark needs is
// tested in tasks/prepare.

var seriesOpt = imagingtest.Options{AxialSlices: 12, CoronalSlices: 8, Size: 64}

func writeRoot(t testing.TB, patients int, o imagingtest.Options, slide int) string {
	t.Helper()
	root := t.TempDir()
	for p := range patients {
		for si, sp := range imagingtest.Plans(o) {
			if _, err := imagingtest.WriteSeries(root, fmt.Sprintf("P%d/%s", p, sp.Sequence), o, p, si, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := imagingtest.WritePNG(filepath.Join(root, fmt.Sprintf("P%d", p), "slide.png"), imagingtest.SlideImage(slide, slide*2/3, p)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// smallParams keep tests fast.
func smallParams() imaging.Params {
	p := imaging.DefaultParams()
	p.Tile, p.Caption, p.Overview = 64, 12, 96
	return p
}

// noExternal pins "no dcmtk" so tests do not depend on PATH.
type noExternal struct{}

func (noExternal) Decompress(context.Context, []byte, string) ([]byte, error) {
	return nil, errors.New("no external decoder in tests")
}

func newExec(t testing.TB, root, out string, workers int, p imaging.Params) *Executor {
	t.Helper()
	e, err := New(Options{Root: root, Out: out, Workers: workers, Params: p, External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// patientJobs makes patient k's jobs: its overview, a panel per series,
// a card over all card sequences, and its axial then coronal plane groups.
func patientJobs(t testing.TB, e *Executor, k int) []Job {
	t.Helper()
	pid := fmt.Sprintf("P%d", k)
	p := e.Params()
	series := map[string]*imaging.Series{}
	jobs := []Job{{Output: pid + "/overview.png", Owner: "patient " + pid, Draw: Overview{Slide: pid + "/slide.png"}}}
	for i, sp := range imagingtest.Plans(seriesOpt) {
		s, err := e.ReadSeries(pid+"/"+sp.Sequence, sp.Sequence)
		if err != nil {
			jobs = append(jobs, Job{Output: fmt.Sprintf("%s/panel_%02d.png", pid, i+1), Owner: "patient " + pid, Err: err})
			continue
		}
		series[sp.Sequence] = s
		jobs = append(jobs, Job{Output: fmt.Sprintf("%s/panel_%02d.png", pid, i+1), Owner: "patient " + pid,
			Draw: Grid{Kind: "panel", Columns: p.PanelGrid, Cells: imaging.PanelCells(p, s)}})
	}
	var boxes []imaging.SliceBox
	for _, seq := range imaging.CardSequences {
		boxes = append(boxes, imaging.SliceBox{Sequence: seq, Instance: 4, Rect: image.Rect(10, 10, 30, 30)})
	}
	if cells, err := imaging.CardCells(p, "clivus", boxes, series); err == nil {
		jobs = append(jobs, Job{Output: pid + "/card_01.png", Owner: "patient " + pid, Draw: Grid{Kind: "card", Columns: 3, Cells: cells}})
	}
	n := 0
	for _, pl := range []struct {
		plane string
		seqs  []string
	}{{imaging.PlaneAxial, imaging.AxialGroupSequences}, {imaging.PlaneCoronal, imaging.CoronalGroupSequences}} {
		rows := make([]*imaging.Series, len(pl.seqs))
		for i, q := range pl.seqs {
			rows[i] = series[q]
			if rows[i] == nil {
				return jobs
			}
		}
		groups, _, err := imaging.PlanGroups(pl.plane, rows, nil)
		if err != nil {
			jobs = append(jobs, Job{Output: pid + "/groups (" + pl.plane + ")", Owner: "patient " + pid, Err: err})
			continue
		}
		for _, g := range groups {
			n++
			jobs = append(jobs, Job{Output: fmt.Sprintf("%s/g_%03d.png", pid, n), Owner: "patient " + pid, Draw: PlaneGroup{Group: g}})
		}
	}
	return jobs
}

// batches yields each patient's jobs, made as the executor takes them.
func batches(t testing.TB, e *Executor, patients int) iter.Seq[[]Job] {
	return func(yield func([]Job) bool) {
		for k := range patients {
			if !yield(patientJobs(t, e, k)) {
				return
			}
		}
	}
}

func runAll(t *testing.T, root, out string, workers int) ([]Result, *Report) {
	t.Helper()
	e := newExec(t, root, out, workers, smallParams())
	res, rep, err := e.Run(context.Background(), batches(t, e, 2))
	if err != nil {
		t.Fatal(err)
	}
	return res, rep
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, cacheDir) {
			return nil
		}
		b, _ := os.ReadFile(p)
		files[rel] = b
		return nil
	})
	return files
}

func TestRunWritesEveryJobsImageInJobOrder(t *testing.T) {
	root := writeRoot(t, 1, seriesOpt, 300)
	out := t.TempDir()
	e := newExec(t, root, out, 2, imaging.DefaultParams())
	var jobs []Job
	res, rep, err := e.Run(context.Background(), func(yield func([]Job) bool) {
		jobs = patientJobs(t, e, 0)
		yield(jobs)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	// 1 overview, 6 panels, 1 card, 12 axial and 8 coronal groups.
	if len(res) != len(jobs) || len(jobs) != 1+6+1+12+8 || rep.Outputs != len(jobs) || rep.Written != len(jobs) {
		t.Fatalf("%d jobs, %d results, report %+v", len(jobs), len(res), rep)
	}
	for i, r := range res {
		if r.Err != nil || r.Image.Path != jobs[i].Output {
			t.Fatalf("result %d is %+v for job %s", i, r, jobs[i].Output)
		}
		b, err := os.ReadFile(filepath.Join(out, r.Image.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != r.Image.SHA256 || int64(len(b)) != r.Image.Bytes {
			t.Errorf("%s: sha256/size do not match the file", r.Image.Path)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != r.Image.Width || cfg.Height != r.Image.Height {
			t.Errorf("%s: %v %dx%d vs result %dx%d", r.Image.Path, err, cfg.Width, cfg.Height, r.Image.Width, r.Image.Height)
		}
	}
	if g := res[8].Image; g.Width != 512 || g.Height != 3*(512+imaging.DefaultParams().Caption) {
		t.Errorf("axial plane group %dx%d", g.Width, g.Height)
	}
	if c := res[7].Image; c.Width != 1536 || c.Height != 2048 {
		t.Errorf("card %dx%d", c.Width, c.Height)
	}
}

func TestDeterministicAcrossRunsAndWorkers(t *testing.T) {
	root := writeRoot(t, 2, seriesOpt, 300)
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	ra, _ := runAll(t, root, a, 1)
	rb, _ := runAll(t, root, b, 2)
	rc, _ := runAll(t, root, c, 5)
	if !slices.Equal(ra, rb) || !slices.Equal(ra, rc) {
		t.Error("results differ between worker counts")
	}
	ta, tb, tc := readTree(t, a), readTree(t, b), readTree(t, c)
	if len(ta) < 50 {
		t.Fatalf("only %d files", len(ta))
	}
	for name, want := range ta {
		if !bytes.Equal(tb[name], want) || !bytes.Equal(tc[name], want) {
			t.Errorf("%s differs between worker counts", name)
		}
	}
	if len(tb) != len(ta) || len(tc) != len(ta) {
		t.Errorf("file counts %d %d %d", len(ta), len(tb), len(tc))
	}
}

func TestCacheHitsMissesAndResume(t *testing.T) {
	root := writeRoot(t, 1, seriesOpt, 300)
	out := t.TempDir()
	run1 := func(p imaging.Params) *Report {
		t.Helper()
		e := newExec(t, root, out, 2, p)
		_, rep, err := e.Run(context.Background(), batches(t, e, 1))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	first := run1(smallParams())
	if first.Cached != 0 || first.Written != first.Outputs {
		t.Fatalf("first run: %+v", first)
	}
	before := readTree(t, out)
	again := run1(smallParams())
	if again.Written != 0 || again.Cached != first.Outputs {
		t.Fatalf("rerun must be all cache hits: %+v", again)
	}
	after := readTree(t, out)
	for name := range before {
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("rerun changed %s", name)
		}
	}
	// Change one T2 slice: only the outputs using it are redone (its
	// panel, the axial group that shows it).
	slice := filepath.Join(root, "P0", imaging.SeqT2Ax, "s005.png")
	f, _ := os.Create(slice)
	png.Encode(f, image.NewGray(image.Rect(0, 0, 64, 64)))
	f.Close()
	if changed := run1(smallParams()); changed.Written == 0 || changed.Written > 4 {
		t.Errorf("after changing one slice, %d outputs redone (want the few using it)", changed.Written)
	}
	// Interrupted run: lose some outputs, rerun resumes with just those.
	os.Remove(filepath.Join(out, "P0", "g_003.png"))
	os.WriteFile(filepath.Join(out, "P0", "card_01.png"), []byte("half written"), 0o644)
	if resumed := run1(smallParams()); resumed.Written != 2 {
		t.Errorf("resume redid %d outputs, want 2", resumed.Written)
	}
	// New parameters miss everything.
	p := smallParams()
	p.Overview = 128
	if rep := run1(p); rep.Cached != 0 {
		t.Errorf("changed parameters must miss the cache: %+v", rep)
	}
}

func TestCancelledRunIsInterrupted(t *testing.T) {
	root := writeRoot(t, 1, seriesOpt, 300)
	out := t.TempDir()
	e := newExec(t, root, out, 2, smallParams())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _, err := e.Run(ctx, batches(t, e, 1))
	if !errors.Is(err, ErrInterrupted) || res != nil {
		t.Fatalf("cancelled run: %d results, err %v; want none and ErrInterrupted", len(res), err)
	}
}

// TestFailedJobsAreRecordedAndTheRunGoesOn: a job that could not be
// planned, a corrupt input, an output path leaving Out and two jobs with
// one output each fail on their own, named; the other jobs are made.
func TestFailedJobsAreRecordedAndTheRunGoesOn(t *testing.T) {
	root := writeRoot(t, 1, seriesOpt, 300)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.png"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(root, "P0", imaging.SeqT1Ax, "s003.png"), []byte("\x89PNG\r\n\x1a\ntruncated"), 0o644)
	e := newExec(t, root, t.TempDir(), 2, smallParams())
	jobs := patientJobs(t, e, 0)
	jobs = append(jobs,
		Job{Output: "P0/unplanned", Owner: "patient P0", Err: errors.New("the patient has no T2_Ax series")},
		Job{Output: "../escape.png", Draw: Overview{Slide: "P0/slide.png"}},
		Job{Output: ".cache/x.png", Draw: Overview{Slide: "P0/slide.png"}},
		Job{Output: "P0/overview.png", Draw: Overview{Slide: "P0/slide.png"}},
		Job{Output: "P0/outside.png", Draw: Overview{Slide: "../" + filepath.Base(outside) + "/secret.png"}},
		Job{Output: "P0/nothing.png"},
	)
	res, rep, err := e.Run(context.Background(), slices.Values([][]Job{jobs}))
	if err != nil {
		t.Fatal(err)
	}
	msgs := ""
	for _, fe := range rep.Errors {
		msgs += fe.Error() + "\n"
	}
	for _, want := range []string{
		"patient P0: P0/panel_01.png: ", "P0/T1_Ax/s003.png", // the corrupt slice, named
		"patient P0: P0/unplanned: the patient has no T2_Ax series",
		`output path "../escape.png" must be relative`, `output path ".cache/x.png"`,
		"another job of this run makes P0/overview.png already",
		"P0/outside.png: ", "P0/nothing.png: the job has nothing to draw",
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no error mentioning %q in:\n%s", want, msgs)
		}
	}
	if !slices.IsSortedFunc(rep.Errors, func(a, b FileError) int { return strings.Compare(a.Output, b.Output) }) {
		t.Errorf("errors not sorted by output:\n%s", msgs)
	}
	failed := 0
	for i, r := range res {
		if (r.Err != nil) == (r.Image.Path != "") {
			t.Errorf("job %s: result %+v has both or neither an image and an error", jobs[i].Output, r)
		}
		if r.Err != nil {
			failed++
		}
	}
	if failed != len(rep.Errors) || res[0].Err != nil || res[2].Err != nil {
		t.Errorf("%d failed results, %d errors; overview %v, panel 2 %v", failed, len(rep.Errors), res[0].Err, res[2].Err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "escape.png")); err == nil {
		t.Error("a job wrote outside the output folder")
	}
	// Strict stops at the first failure.
	e2, err := New(Options{Root: root, Out: t.TempDir(), Workers: 1, Strict: true, Params: smallParams(), External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if _, _, err := e2.Run(context.Background(), batches(t, e2, 1)); err == nil || !strings.Contains(err.Error(), "s003.png") {
		t.Errorf("strict run with a corrupt slice: %v", err)
	}
}

// TestOutputsFollowTheUmask (issue 12, item 20): outputs are created as
// any file is, so an engine running as another user can read them when
// the umask lets it.
func TestOutputsFollowTheUmask(t *testing.T) {
	root := writeRoot(t, 1, seriesOpt, 300)
	for _, c := range []struct{ umask, want fs.FileMode }{{0o022, 0o644}, {0o027, 0o640}} {
		old := syscall.Umask(int(c.umask))
		out := t.TempDir()
		e := newExec(t, root, out, 2, smallParams())
		_, _, err := e.Run(context.Background(), batches(t, e, 1))
		if err == nil {
			err = e.WriteFile("index.json", []byte("{}\n"))
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{"index.json", "P0/g_001.png", "P0/overview.png"} {
			st, err := os.Stat(filepath.Join(out, rel))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != c.want {
				t.Errorf("umask %03o: %s has mode %v, want %v", c.umask, rel, st.Mode().Perm(), c.want)
			}
		}
	}
}

func TestWriteFileKeepsAnUnchangedFile(t *testing.T) {
	out := t.TempDir()
	e := newExec(t, t.TempDir(), out, 1, smallParams())
	if err := e.WriteFile("m.json", []byte("a")); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1e9, 0)
	os.Chtimes(filepath.Join(out, "m.json"), old, old)
	if err := e.WriteFile("m.json", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(out, "m.json")); !st.ModTime().Equal(old) {
		t.Error("an unchanged file was written again")
	}
	if err := e.WriteFile("../m.json", []byte("a")); err == nil {
		t.Error("WriteFile wrote outside the output folder")
	}
}

// TestOutputsShareTiles: a slice tile several outputs show (a panel, the
// card, a plane group) is resized once.
func TestOutputsShareTiles(t *testing.T) {
	root := writeRoot(t, 1, seriesOpt, 300)
	out := t.TempDir()
	run1 := func() (*Report, int) {
		e := newExec(t, root, out, 2, smallParams())
		distinct := map[tileUse]bool{}
		_, rep, err := e.Run(context.Background(), func(yield func([]Job) bool) {
			jobs := patientJobs(t, e, 0)
			for _, j := range jobs {
				if j.Draw != nil {
					for _, u := range j.Draw.tiles() {
						distinct[u] = true
					}
				}
			}
			yield(jobs)
		})
		if err != nil {
			t.Fatal(err)
		}
		return rep, len(distinct)
	}
	first, distinct := run1()
	if first.TilesShown <= distinct || first.TilesResized != distinct {
		t.Errorf("%d tiles shown, %d resized, %d distinct: want every distinct tile resized once", first.TilesShown, first.TilesResized, distinct)
	}
	t.Logf("%d tiles shown, %d resized", first.TilesShown, first.TilesResized)
	// A rerun renders nothing, so it resizes nothing.
	if again, _ := run1(); again.TilesShown != 0 || again.TilesResized != 0 {
		t.Errorf("all-cached rerun: %d tiles shown, %d resized; want 0 and 0", again.TilesShown, again.TilesResized)
	}
}

func TestAnExecutorRunsOnce(t *testing.T) {
	e := newExec(t, t.TempDir(), t.TempDir(), 1, smallParams())
	none := slices.Values([][]Job{})
	if _, _, err := e.Run(context.Background(), none); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Run(context.Background(), none); err == nil {
		t.Error("a second Run of one executor was accepted")
	}
}

func BenchmarkRunPatient(b *testing.B) {
	o := imagingtest.Options{}
	root := writeRoot(b, 1, o, 2000)
	for b.Loop() {
		e, err := New(Options{Root: root, Out: b.TempDir(), Workers: 2, External: noExternal{}})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := e.Run(context.Background(), batches(b, e, 1)); err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
