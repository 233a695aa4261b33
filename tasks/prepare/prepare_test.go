package prepare

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/imaging/prep"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/dataset/datasettest"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

// bench is the benchmark whose images the tests prepare.
func bench() *tasks.Registry { return npcbench.Registry(configs.DefaultStructures()) }

func smallDataset(t *testing.T, patients int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := datasettest.Write(dir, datasettest.Options{Patients: patients, SlideSize: 300,
		Series: imagingtest.Options{AxialSlices: 12, CoronalSlices: 8, Size: 64}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// smallParams keep tests fast; tile geometry at full size is tested in
// package imaging and in TestRunOutputsManifestAndShapes.
func smallParams() imaging.Params {
	p := imaging.DefaultParams()
	p.Tile, p.Caption, p.Overview = 64, 12, 96
	return p
}

func run(t *testing.T, data, out string, workers int) (*dataset.Prepared, *Report) {
	t.Helper()
	return runWith(t, data, out, workers, smallParams())
}

func runWith(t *testing.T, data, out string, workers int, p imaging.Params) (*dataset.Prepared, *Report) {
	t.Helper()
	man, rep, err := Run(context.Background(), Options{Tasks: bench(), Dataset: data, Out: out, Workers: workers, Params: p, External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	return man, rep
}

// noExternal pins "no dcmtk" so tests do not depend on PATH.
type noExternal struct{}

func (noExternal) Decompress(context.Context, []byte, string) ([]byte, error) {
	return nil, errors.New("no external decoder in tests")
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel], _ = os.ReadFile(p)
		return nil
	})
	return files
}

func TestRunOutputsManifestAndShapes(t *testing.T) {
	data := smallDataset(t, 1)
	out := t.TempDir()
	man, rep := runWith(t, data, out, 2, imaging.DefaultParams())
	if len(rep.Errors) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("errors: %v; problems: %v", rep.Errors, rep.Problems)
	}
	p := man.Patients[0]
	if p.Overview == nil || len(p.Panels) != 6 || len(p.Cards) != 2 || len(p.Pages) != 10 {
		t.Fatalf("outputs: overview %v panels %d cards %d pages %d", p.Overview != nil, len(p.Panels), len(p.Cards), len(p.Pages))
	}
	// T range [-45, 0] holds axial z = -45..-27 (7 slices); N holds all 12;
	// all 8 coronal planes follow the axial ones.
	if len(p.TGroups) != 7+8 || len(p.NGroups) != 12+8 {
		t.Fatalf("t groups %d, n groups %d", len(p.TGroups), len(p.NGroups))
	}
	for i, g := range p.NGroups {
		wantPlane, wantH := imaging.PlaneAxial, 1644
		if i >= 12 {
			wantPlane, wantH = imaging.PlaneCoronal, 1096
		}
		if g.Plane != wantPlane || g.Width != 512 || g.Height != wantH {
			t.Fatalf("group %d: %s %dx%d", i, g.Plane, g.Width, g.Height)
		}
		if i > 0 && i < 12 && g.Position >= p.NGroups[i-1].Position {
			t.Fatalf("axial groups not superior to inferior: %v then %v", p.NGroups[i-1].Position, g.Position)
		}
	}
	if p.Panels[1].Sequence != imaging.SeqT2Ax || p.Cards[1].Side != "right" {
		t.Errorf("panel/card labels wrong: %+v %+v", p.Panels[1], p.Cards[1])
	}
	if rep.Outputs != 1+6+2+15+20+10 {
		t.Errorf("report counts %d outputs", rep.Outputs)
	}
	// Every manifest entry matches its file.
	all := []dataset.Image{*p.Overview}
	for _, x := range p.Panels {
		all = append(all, x.Image)
	}
	for _, x := range p.Cards {
		all = append(all, x.Image)
	}
	for _, x := range p.TGroups {
		all = append(all, x.Image)
	}
	all = append(all, p.Pages...)
	for _, img := range all {
		b, err := os.ReadFile(filepath.Join(out, img.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != img.SHA256 || int64(len(b)) != img.Bytes {
			t.Errorf("%s: manifest sha256/size do not match the file", img.Path)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != img.Width || cfg.Height != img.Height {
			t.Errorf("%s: %v %dx%d vs manifest %dx%d", img.Path, err, cfg.Width, cfg.Height, img.Width, img.Height)
		}
	}
	onDisk, err := dataset.LoadPrepared(out)
	if err != nil || onDisk.Format != dataset.PreparedFormat || len(onDisk.Patients) != 1 {
		t.Fatalf("manifest on disk: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(data, dataset.RawName))
	if sum := sha256.Sum256(raw); onDisk.DatasetSHA256 != hex.EncodeToString(sum[:]) || onDisk.Dataset != "imagingtest" {
		t.Errorf("manifest names dataset %q %s, want the sha256 of dataset.json", onDisk.Dataset, onDisk.DatasetSHA256)
	}
}

func TestDeterministicAcrossRunsAndWorkers(t *testing.T) {
	data := smallDataset(t, 2)
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	run(t, data, a, 1)
	run(t, data, b, 2)
	run(t, data, c, 5)
	ta, tb, tc := readTree(t, a), readTree(t, b), readTree(t, c)
	if len(ta) < 50 || ta[dataset.PreparedName] == nil {
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
	// A rerun takes every image from the cache and leaves the manifest.
	_, rep := run(t, data, a, 2)
	if rep.Written != 0 || rep.Cached != rep.Outputs {
		t.Errorf("rerun: %+v", rep.Report)
	}
	if again := readTree(t, a); !bytes.Equal(again[dataset.PreparedName], ta[dataset.PreparedName]) {
		t.Error("rerun changed the manifest")
	}
}

func TestCancelledRunWritesNoManifest(t *testing.T) {
	data := smallDataset(t, 1)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Run(ctx, Options{Tasks: bench(), Dataset: data, Out: out, External: noExternal{}})
	if !errors.Is(err, prep.ErrInterrupted) {
		t.Fatalf("cancelled run: %v, want prep.ErrInterrupted", err)
	}
	if _, err := os.Stat(filepath.Join(out, dataset.PreparedName)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("cancelled run wrote a manifest")
	}
}

// editDataset rewrites dataset.json through fn.
func editDataset(t *testing.T, dir string, fn func(*dataset.Raw)) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, dataset.RawName))
	var raw dataset.Raw
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	fn(&raw)
	b, _ = json.Marshal(raw)
	os.WriteFile(filepath.Join(dir, dataset.RawName), b, 0o644)
}

func TestBadInputsAreReportedNotFatal(t *testing.T) {
	data := smallDataset(t, 3)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.png"), []byte("x"), 0o644)
	// P001: slide escapes the root, T2 series is a symlink leaving it.
	// P002: a corrupt slice and a 30k-pixel PNG header on a coronal slice.
	// P003: the T2 series has another frame of reference.
	editDataset(t, data, func(r *dataset.Raw) {
		r.Patients[0].Pathology.File = "../" + filepath.Base(outside) + "/secret.png"
	})
	t2 := filepath.Join(data, "P001", "mri", imaging.SeqT2Ax)
	os.RemoveAll(t2)
	if err := os.Symlink(outside, t2); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(data, "P002", "mri", imaging.SeqT1Ax, "s003.png"), []byte("\x89PNG\r\n\x1a\ntruncated"), 0o644)
	os.WriteFile(filepath.Join(data, "P002", "mri", imaging.SeqT1Cor, "s002.png"), hugePNGHeader(), 0o644)
	side := filepath.Join(data, "P003", "mri", imaging.SeqT2Ax, imaging.SidecarName)
	b, _ := os.ReadFile(side)
	os.WriteFile(side, bytes.Replace(b, []byte(datasettest.FrameOfReference), []byte("9.9.9"), 1), 0o644)

	out := t.TempDir()
	man, rep, err := Run(context.Background(), Options{Tasks: bench(), Dataset: data, Out: out, Workers: 2, Params: smallParams(), External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := ""
	for _, e := range rep.Errors {
		msgs += e.Error() + "\n"
	}
	for _, want := range []string{
		"patient P001: P001/overview.png", // escaping slide path
		"P001/panel_02.png",               // symlinked series
		"P002/mri/T1_Ax/s003.png",         // corrupt slice named
		"over the limit",                  // 30k header
		"frames of reference differ",      // P003 groups
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no error mentioning %q in:\n%s", want, msgs)
		}
	}
	// The dataset parser names the paths that leave the dataset, too.
	problems := rep.Problems.Error()
	for _, want := range []string{`patients[0] (P001): pathology: path "../`, `patients[0] (P001): series T2_Ax: path "P001/mri/T2_Ax" links outside`} {
		if !strings.Contains(problems, want) {
			t.Errorf("no dataset problem %q in:\n%s", want, problems)
		}
	}
	// The batch went on: P003's overview and panels exist, and the
	// manifest lists only files that were made.
	if man.Patients[2].Overview == nil || len(man.Patients[2].Panels) != 6 {
		t.Error("good outputs of a patient with bad series are missing")
	}
	// P003's axial groups fail; its 8 coronal groups are made.
	if len(man.Patients[2].TGroups) != 8 || man.Patients[2].TGroups[0].Plane != imaging.PlaneCoronal || len(man.Patients[0].Panels) != 5 {
		t.Errorf("failed outputs left in the manifest: %d t groups, %d panels", len(man.Patients[2].TGroups), len(man.Patients[0].Panels))
	}
	// Strict stops at the first error.
	if _, _, err := Run(context.Background(), Options{Tasks: bench(), Dataset: data, Out: t.TempDir(), Workers: 1, Strict: true, Params: smallParams(), External: noExternal{}}); err == nil {
		t.Error("strict run with bad inputs returned no error")
	}
}

// TestProblemsInTheDatasetAreReported (issue 18): prep reads dataset.json
// with the dataset package's parser, so what it finds wrong is reported
// by name. Before, prep decoded the file on its own: a misspelt cohort
// prepared nothing for it, in silence, and the run found out later.
func TestProblemsInTheDatasetAreReported(t *testing.T) {
	data := smallDataset(t, 2)
	editDataset(t, data, func(r *dataset.Raw) {
		r.Patients[1].Cohorts = []string{dataset.CohortSequence, "t-groups"}
	})
	man, rep := run(t, data, t.TempDir(), 2)
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Error(), `patients[1] (P002): unknown cohort "t-groups"`) ||
		!strings.Contains(rep.Problems[0].Error(), filepath.Join(data, dataset.RawName)) {
		t.Fatalf("problems: %v", rep.Problems)
	}
	if len(man.Patients[1].Panels) != 6 || len(man.Patients[0].TGroups) == 0 {
		t.Error("a problem with one cohort stopped the others")
	}
	// A file of another format is no dataset: nothing is prepared.
	editDataset(t, data, func(r *dataset.Raw) { r.Format = "npcorch-dataset/0" })
	out := t.TempDir()
	if _, _, err := Run(context.Background(), Options{Tasks: bench(), Dataset: data, Out: out, Params: smallParams(), External: noExternal{}}); err == nil ||
		!strings.Contains(err.Error(), "npcorch-dataset/0") {
		t.Errorf("another format: %v", err)
	}
	os.WriteFile(filepath.Join(data, dataset.RawName), []byte("{\n\"format\": \"npcorch-dataset/1\",\n\"patients\": [,]\n}"), 0o644)
	if _, _, err := Run(context.Background(), Options{Tasks: bench(), Dataset: data, Out: out, External: noExternal{}}); err == nil || !strings.Contains(err.Error(), "dataset.json: line 3") {
		t.Errorf("syntax error: %v", err)
	}
}

// TestUnsafePatientIDFailsThatPatientOnly: an id that cannot name a
// folder fails its patient, recorded in the manifest; the others are made.
func TestUnsafePatientIDFailsThatPatientOnly(t *testing.T) {
	data := smallDataset(t, 2)
	editDataset(t, data, func(r *dataset.Raw) { r.Patients[0].ID = "../P001" })
	out := t.TempDir()
	man, rep := run(t, data, out, 2)
	if len(rep.Errors) != 1 || rep.Errors[0].Output != "../P001" || !strings.Contains(rep.Errors[0].Error(), "cannot name an output folder") {
		t.Fatalf("errors: %v", rep.Errors)
	}
	f := man.Patients[0].Failed
	if len(f) != 1 || f[0].Kind != dataset.KindPatient || f[0].Path != "../P001" || man.Patients[0].Overview != nil {
		t.Errorf("manifest entry of the bad patient: %+v", man.Patients[0])
	}
	if len(man.Patients[1].Panels) != 6 {
		t.Error("the good patient was not prepared")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "P001")); err == nil {
		t.Error("prep wrote outside its output folder")
	}
}

func hugePNGHeader() []byte {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1)))
	b := buf.Bytes()
	// Patch IHDR width/height to 30000 and fix its CRC.
	ihdr := b[8 : 8+8+13+4]
	copy(ihdr[8:12], []byte{0, 0, 0x75, 0x30})
	copy(ihdr[12:16], []byte{0, 0, 0x75, 0x30})
	s := crc32.ChecksumIEEE(ihdr[4 : 8+13])
	copy(ihdr[8+13:], []byte{byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)})
	return b
}

// BenchmarkPrepPatient prepares one full-size patient of every cohort.
func BenchmarkPrepPatient(b *testing.B) {
	dir := b.TempDir()
	if _, err := datasettest.Write(dir, datasettest.Options{Patients: 1, SlideSize: 2000}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		out := b.TempDir()
		if _, _, err := Run(context.Background(), Options{Tasks: bench(), Dataset: dir, Out: out, Workers: 2, External: noExternal{}}); err != nil {
			b.Fatal(err)
		}
	}
}

// readManifestJSON reads Out/manifest.json as plain JSON.
func readManifestJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, dataset.PreparedName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestManifestRecordsFailures (issue 12, item 19): every image prep could
// not make is in the manifest, with what it is and why, so that a run can
// name the items that lack it.
func TestManifestRecordsFailures(t *testing.T) {
	data := smallDataset(t, 1)
	os.WriteFile(filepath.Join(data, "P001", "mri", imaging.SeqT1CCorFS, "s004.png"), []byte("\x89PNG\r\n\x1a\ntruncated"), 0o644)
	out := t.TempDir()
	_, rep := run(t, data, out, 2)
	if len(rep.Errors) == 0 {
		t.Fatal("a corrupt slice made no error")
	}
	pats := readManifestJSON(t, out)["patients"].([]any)
	failed, _ := pats[0].(map[string]any)["failed"].([]any)
	if len(failed) != len(rep.Errors) {
		t.Fatalf("manifest records %d failures, the report %d: %v", len(failed), len(rep.Errors), failed)
	}
	kinds := map[string]bool{}
	for i, f := range failed {
		m := f.(map[string]any)
		if m["path"] != rep.Errors[i].Output || !strings.Contains(m["reason"].(string), "s004.png") {
			t.Errorf("failure %d: %v, report: %v", i, m, rep.Errors[i])
		}
		kinds[m["kind"].(string)] = true
		if m["kind"] == "panel" && m["sequence"] != imaging.SeqT1CCorFS {
			t.Errorf("panel failure without its sequence: %v", m)
		}
		if m["kind"] == "card" && (m["structure"] != "parapharyngeal_space" || m["side"] == nil) {
			t.Errorf("card failure without its finding: %v", m)
		}
	}
	// The T1+C COR FS slice is on its panel, its cards, the coronal plane
	// groups and the CarePath pages.
	for _, k := range []string{"panel", "card", "t_groups", "n_groups", "page"} {
		if !kinds[k] {
			t.Errorf("no %s failure recorded: %v", k, failed)
		}
	}
}

// TestObliqueAxialSeriesKeepsCoronalGroups (issue 12, item 20): an axial
// series that cannot be matched drops the axial plane groups only; the
// patient's coronal groups are made, and the axial failure is reported.
func TestObliqueAxialSeriesKeepsCoronalGroups(t *testing.T) {
	data := smallDataset(t, 1)
	side := filepath.Join(data, "P001", "mri", imaging.SeqT2Ax, imaging.SidecarName)
	b, _ := os.ReadFile(side)
	var meta imaging.SeriesMeta
	json.Unmarshal(b, &meta)
	meta.Orientation = [6]float64{1, 0, 0, 0, 0.9397, 0.3420} // tilted 20° about x
	b, _ = json.Marshal(meta)
	os.WriteFile(side, b, 0o644)
	out := t.TempDir()
	man, rep := run(t, data, out, 2)
	coronal := 0
	for _, g := range man.Patients[0].TGroups {
		if g.Plane == imaging.PlaneCoronal {
			coronal++
		}
	}
	if coronal != 8 || len(man.Patients[0].TGroups) != 8 {
		t.Errorf("t groups: %d, of them coronal %d; want the 8 coronal ones", len(man.Patients[0].TGroups), coronal)
	}
	msgs := ""
	for _, e := range rep.Errors {
		msgs += e.Error() + "\n"
	}
	if !strings.Contains(msgs, "P001/t_groups (axial): axial groups: ") || !strings.Contains(msgs, "not parallel") {
		t.Errorf("the axial failure is not reported:\n%s", msgs)
	}
}

// TestSkippedFilesInADICOMSeriesAreReported: a series folder's files that
// are not DICOM are skipped with a warning naming them, not in silence.
func TestSkippedFilesInADICOMSeriesAreReported(t *testing.T) {
	data := t.TempDir()
	if _, err := datasettest.Write(data, datasettest.Options{DICOM: true, Series: imagingtest.Options{AxialSlices: 6, CoronalSlices: 4, Size: 32},
		Cohorts: []string{dataset.CohortSequence}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(data, "P001", "mri", imaging.SeqT2Ax, "notes.txt"), []byte("acquired on the old scanner"), 0o644)
	_, rep := run(t, data, t.TempDir(), 2)
	if len(rep.Errors) != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "notes.txt") || !strings.Contains(w, "P001/mri/T2_Ax") {
		t.Errorf("warnings do not name the skipped file: %q", w)
	}
}

// TestImagesFollowTheTasksNeeds (issue 18): which images a patient gets
// is its cohorts' tasks' knowledge (Task.Images), not prep's: a patient
// of the sequence cohort alone gets its panels and no overview, although
// it has a slide, and one of the pathology cohort alone gets its overview
// and nothing drawn from its series.
func TestImagesFollowTheTasksNeeds(t *testing.T) {
	data := smallDataset(t, 2)
	editDataset(t, data, func(r *dataset.Raw) {
		r.Patients[0].Cohorts = []string{dataset.CohortSequence}
		r.Patients[1].Cohorts = []string{dataset.CohortPathology}
	})
	man, _ := run(t, data, t.TempDir(), 2)
	seq, path := man.Patients[0], man.Patients[1]
	if seq.Overview != nil || len(seq.Panels) != 6 || len(seq.Cards)+len(seq.TGroups)+len(seq.NGroups)+len(seq.Pages) != 0 {
		t.Errorf("sequence patient: overview %v, %d panels, %d cards, %d+%d groups, %d pages; want 6 panels only",
			seq.Overview != nil, len(seq.Panels), len(seq.Cards), len(seq.TGroups), len(seq.NGroups), len(seq.Pages))
	}
	if path.Overview == nil || len(path.Panels)+len(path.Cards)+len(path.TGroups)+len(path.NGroups)+len(path.Pages) != 0 {
		t.Errorf("pathology patient: overview %v and images drawn from its series; want the overview only", path.Overview != nil)
	}
	needs := bench().ImageNeeds()
	if !slices.Equal(needs[dataset.CohortCarePath], []string{dataset.KindOverview, dataset.KindPage}) {
		t.Errorf("CarePath needs %v, want its tasks' overview and pages", needs[dataset.CohortCarePath])
	}
}

// BenchmarkPrepKinds runs prep over the inputs of scripts/bench/run.sh's
// PNG rows (plane groups, cards, overviews), two workers; profile one with
// -run '^$' -bench 'PrepKinds/groups' -cpuprofile cpu.out.
func BenchmarkPrepKinds(b *testing.B) {
	for _, c := range []struct {
		name string
		o    datasettest.Options
	}{
		{"groups", datasettest.Options{Patients: 6, Cohorts: []string{dataset.CohortTGroups}}},
		{"cards", datasettest.Options{Patients: 12, Cohorts: []string{dataset.CohortCards}}},
		{"overviews", datasettest.Options{Patients: 6, Cohorts: []string{dataset.CohortPathology}, SlideSize: 4000,
			Series: imagingtest.Options{AxialSlices: 1, CoronalSlices: 1, Size: 16}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if _, err := datasettest.Write(dir, c.o); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := Run(context.Background(), Options{Tasks: bench(), Dataset: dir, Out: b.TempDir(), Workers: 2, External: noExternal{}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSeriesListedAsFilesGiveTheSameImages: the same DICOM series, moved
// into one folder per patient (as a PACS export keeps them) and listed
// file by file in dataset.json, give the same images as one folder per
// series.
func TestSeriesListedAsFilesGiveTheSameImages(t *testing.T) {
	data := t.TempDir()
	raw, err := datasettest.Write(data, datasettest.Options{DICOM: true, Series: imagingtest.Options{AxialSlices: 8, CoronalSlices: 8, Size: 32},
		Cohorts: []string{dataset.CohortSequence, dataset.CohortTGroups, dataset.CohortCards}})
	if err != nil {
		t.Fatal(err)
	}
	man, _ := run(t, data, t.TempDir(), 2)
	n := 0
	for si, ref := range raw.Patients[0].Series {
		entries, _ := os.ReadDir(filepath.Join(data, ref.Dir))
		var files []string
		for _, e := range entries {
			n++
			to := fmt.Sprintf("pacs/P001/ST1/%05d", n*7%997)
			os.MkdirAll(filepath.Join(data, "pacs", "P001", "ST1"), 0o755)
			if err := os.Rename(filepath.Join(data, ref.Dir, e.Name()), filepath.Join(data, filepath.FromSlash(to))); err != nil {
				t.Fatal(err)
			}
			files = append(files, to)
		}
		raw.Patients[0].Series[si] = dataset.SeriesRef{Sequence: ref.Sequence, Files: files}
	}
	b, _ := json.Marshal(raw)
	os.WriteFile(filepath.Join(data, "dataset.json"), b, 0o644)
	listed, rep := run(t, data, t.TempDir(), 2)
	if len(rep.Errors) != 0 {
		t.Fatalf("errors: %v", rep.Errors)
	}
	sums := func(m *dataset.Prepared) []string {
		var out []string
		for _, p := range m.Patients {
			for _, x := range p.Panels {
				out = append(out, x.Path+" "+x.SHA256)
			}
			for _, x := range p.Cards {
				out = append(out, x.Path+" "+x.SHA256)
			}
			for _, x := range p.TGroups {
				out = append(out, x.Path+" "+x.SHA256)
			}
		}
		return out
	}
	want, got := sums(man), sums(listed)
	if len(want) < 10 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("images from listed files:\n%s\nfrom folders:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
