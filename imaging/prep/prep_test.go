package prep

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
	"strings"
	"syscall"
	"testing"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/tasks/dataset"
)

func smallDataset(t *testing.T, patients int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := imagingtest.Write(dir, imagingtest.Options{Patients: patients, AxialSlices: 12, CoronalSlices: 8, Size: 64, SlideSize: 300}); err != nil {
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
	man, rep, err := Run(context.Background(), Options{Dataset: data, Out: out, Workers: workers, Params: p, External: noExternal{}})
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
		if strings.HasPrefix(rel, cacheDir) {
			return nil
		}
		b, _ := os.ReadFile(p)
		files[rel] = b
		return nil
	})
	return files
}

func TestRunOutputsManifestAndShapes(t *testing.T) {
	data := smallDataset(t, 1)
	out := t.TempDir()
	man, rep := runWith(t, data, out, 2, imaging.DefaultParams())
	if len(rep.Errors) != 0 {
		t.Fatalf("errors: %v", rep.Errors)
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
	var onDisk dataset.Prepared
	b, _ := os.ReadFile(filepath.Join(out, ManifestName))
	if err := json.Unmarshal(b, &onDisk); err != nil || onDisk.Format != dataset.PreparedFormat || len(onDisk.Patients) != 1 {
		t.Fatalf("manifest on disk: %v", err)
	}
}

func TestDeterministicAcrossRunsAndWorkers(t *testing.T) {
	data := smallDataset(t, 2)
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	run(t, data, a, 1)
	run(t, data, b, 2)
	run(t, data, c, 5)
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
	data := smallDataset(t, 1)
	out := t.TempDir()
	_, first := run(t, data, out, 2)
	if first.Cached != 0 || first.Written != first.Outputs {
		t.Fatalf("first run: %+v", first)
	}
	before := readTree(t, out)
	_, again := run(t, data, out, 2)
	if again.Written != 0 || again.Cached != first.Outputs {
		t.Fatalf("rerun must be all cache hits: %+v", again)
	}
	after := readTree(t, out)
	for name := range before {
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("rerun changed %s", name)
		}
	}
	// Change one T2 slice: only the outputs using it are redone.
	slice := filepath.Join(data, "P001", "mri", imaging.SeqT2Ax, "s005.png")
	f, _ := os.Create(slice)
	png.Encode(f, image.NewGray(image.Rect(0, 0, 64, 64)))
	f.Close()
	_, changed := run(t, data, out, 2)
	if changed.Written == 0 || changed.Written > 6 {
		t.Errorf("after changing one slice, %d outputs redone (want the few using it)", changed.Written)
	}
	// Interrupted run: lose some outputs, rerun resumes with just those.
	os.Remove(filepath.Join(out, "P001", "page_03.png"))
	os.WriteFile(filepath.Join(out, "P001", "card_01.png"), []byte("half written"), 0o644)
	_, resumed := run(t, data, out, 2)
	if resumed.Written != 2 {
		t.Errorf("resume redid %d outputs, want 2", resumed.Written)
	}
	// New parameters miss everything.
	p := smallParams()
	p.Overview = 128
	_, rep, err := Run(context.Background(), Options{Dataset: data, Out: out, Params: p, External: noExternal{}})
	if err != nil || rep.Cached != 0 {
		t.Errorf("changed parameters must miss the cache: %+v %v", rep, err)
	}
}

func TestCancelledRunWritesNoManifest(t *testing.T) {
	data := smallDataset(t, 1)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Run(ctx, Options{Dataset: data, Out: out, External: noExternal{}})
	if err == nil {
		t.Fatal("cancelled run returned no error")
	}
	if _, err := os.Stat(filepath.Join(out, ManifestName)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("cancelled run wrote a manifest")
	}
}

// editDataset rewrites dataset.json through fn.
func editDataset(t *testing.T, dir string, fn func(*dataset.Raw)) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "dataset.json"))
	var raw dataset.Raw
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	fn(&raw)
	b, _ = json.Marshal(raw)
	os.WriteFile(filepath.Join(dir, "dataset.json"), b, 0o644)
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
	os.WriteFile(side, bytes.Replace(b, []byte(imagingtest.FrameOfReference), []byte("9.9.9"), 1), 0o644)

	out := t.TempDir()
	man, rep, err := Run(context.Background(), Options{Dataset: data, Out: out, Workers: 2, Params: smallParams(), External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := ""
	for _, e := range rep.Errors {
		msgs += e.Error() + "\n"
	}
	for _, want := range []string{
		"P001/overview.png",          // escaping slide path
		"P001/panel_02.png",          // symlinked series
		"P002/mri/T1_Ax/s003.png",    // corrupt slice named
		"over the limit",             // 30k header
		"frames of reference differ", // P003 groups
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no error mentioning %q in:\n%s", want, msgs)
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
	if _, _, err := Run(context.Background(), Options{Dataset: data, Out: t.TempDir(), Workers: 1, Strict: true, Params: smallParams(), External: noExternal{}}); err == nil {
		t.Error("strict run with bad inputs returned no error")
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
	crc := crc32IEEE(ihdr[4 : 8+13])
	copy(ihdr[8+13:], crc)
	return b
}

func BenchmarkPrepPatient(b *testing.B) {
	dir := b.TempDir()
	if _, err := imagingtest.Write(dir, imagingtest.Options{Patients: 1, SlideSize: 2000}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		out := b.TempDir()
		if _, _, err := Run(context.Background(), Options{Dataset: dir, Out: out, Workers: 2, External: noExternal{}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepKinds runs prep over the inputs of scripts/bench/run.sh's
// PNG rows (plane groups, cards, overviews), two workers; profile one with
// -run '^$' -bench 'PrepKinds/groups' -cpuprofile cpu.out.
func BenchmarkPrepKinds(b *testing.B) {
	for _, c := range []struct {
		name string
		o    imagingtest.Options
	}{
		{"groups", imagingtest.Options{Patients: 6, Cohorts: []string{dataset.CohortTGroups}}},
		{"cards", imagingtest.Options{Patients: 12, Cohorts: []string{dataset.CohortCards}}},
		{"overviews", imagingtest.Options{Patients: 6, Cohorts: []string{dataset.CohortPathology}, SlideSize: 4000,
			AxialSlices: 1, CoronalSlices: 1, Size: 16}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if _, err := imagingtest.Write(dir, c.o); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := Run(context.Background(), Options{Dataset: dir, Out: b.TempDir(), Workers: 2, External: noExternal{}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func crc32IEEE(b []byte) []byte {
	s := crc32.ChecksumIEEE(b)
	return []byte{byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)}
}

func TestOutputsShareTiles(t *testing.T) {
	data := smallDataset(t, 1)
	out := t.TempDir()
	_, first := run(t, data, out, 2)
	// T and N groups, pages, panels and cards show many slices twice.
	if first.TilesShown == 0 || 2*first.TilesResized > first.TilesShown {
		t.Errorf("%d tiles shown, %d resized: outputs do not share tiles", first.TilesShown, first.TilesResized)
	}
	t.Logf("%d tiles shown, %d resized", first.TilesShown, first.TilesResized)
	// A rerun renders nothing, so it resizes nothing.
	_, again := run(t, data, out, 2)
	if again.TilesShown != 0 || again.TilesResized != 0 {
		t.Errorf("all-cached rerun: %d tiles shown, %d resized; want 0 and 0", again.TilesShown, again.TilesResized)
	}
}

// readManifestJSON reads Out/manifest.json as plain JSON.
func readManifestJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, ManifestName))
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
	}
	// The T1+C COR FS slice is on its panel, its cards, the coronal plane
	// groups and the CarePath pages.
	for _, k := range []string{"panel", "card", "t_groups", "n_groups", "page"} {
		if !kinds[k] {
			t.Errorf("no %s failure recorded: %v", k, failed)
		}
	}
}

// TestOutputsFollowTheUmask (issue 12, item 20): outputs are created as
// any file is, so an engine running as another user can read them when
// the umask lets it.
func TestOutputsFollowTheUmask(t *testing.T) {
	data := smallDataset(t, 1)
	for _, c := range []struct{ umask, want fs.FileMode }{{0o022, 0o644}, {0o027, 0o640}} {
		old := syscall.Umask(int(c.umask))
		out := t.TempDir()
		run(t, data, out, 2)
		syscall.Umask(old)
		for _, rel := range []string{ManifestName, "P001/t_001.png", "P001/overview.png"} {
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
	if !strings.Contains(msgs, "axial") || !strings.Contains(msgs, "not parallel") {
		t.Errorf("the axial failure is not reported:\n%s", msgs)
	}
}

// TestSkippedFilesInADICOMSeriesAreReported: a series folder's files that
// are not DICOM are skipped with a warning naming them, not in silence.
func TestSkippedFilesInADICOMSeriesAreReported(t *testing.T) {
	data := t.TempDir()
	if _, err := imagingtest.Write(data, imagingtest.Options{DICOM: true, AxialSlices: 6, CoronalSlices: 4, Size: 32,
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

// TestSeriesListedAsFilesGiveTheSameImages: the same DICOM series, moved
// into one folder per patient (as a PACS export keeps them) and listed
// file by file in dataset.json, give the same images as one folder per
// series.
func TestSeriesListedAsFilesGiveTheSameImages(t *testing.T) {
	data := t.TempDir()
	raw, err := imagingtest.Write(data, imagingtest.Options{DICOM: true, AxialSlices: 8, CoronalSlices: 8, Size: 32,
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
