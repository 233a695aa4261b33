package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// smallOptions returns a quick dataset's options: three L3 patients (so
// the discordant one exists), two CarePath patients, small images.
func smallOptions(out string, seed int64) Options {
	return Options{Out: out, Seed: seed, Patients: 3, CarePath: 2, ImageSize: 96, SlideWidth: 300, SlideHeight: 200}
}

// treeHash hashes every file path and content below root, in lexical order.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func generate(t *testing.T, opt Options) *dataset.Raw {
	t.Helper()
	raw, err := Generate(context.Background(), opt)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return raw
}

func TestGenerateIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	generate(t, smallOptions(a, 7))
	opt := smallOptions(b, 7)
	opt.Workers = 1 // a different schedule must not change a byte
	generate(t, opt)
	if ha, hb := treeHash(t, a), treeHash(t, b); ha != hb {
		t.Fatalf("two runs with seed 7 differ: %s vs %s", ha, hb)
	}
}

func TestSeedChangesLabelsAndImages(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	ra := generate(t, smallOptions(a, 1))
	rb := generate(t, smallOptions(b, 2))
	labels := func(r *dataset.Raw) string {
		var s []string
		for _, p := range r.Patients {
			s = append(s, p.TStage, p.NStage)
			for _, f := range p.Structures {
				s = append(s, fmt.Sprint(f.Invasion))
			}
		}
		return strings.Join(s, ",")
	}
	if labels(ra) == labels(rb) {
		t.Error("seeds 1 and 2 gave the same labels")
	}
	for _, f := range []string{"P01/mri/t1_ax/0010.png", "P02/pathology/slide.png"} {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("read %s: %v %v", f, err1, err2)
		}
		if bytes.Equal(x, y) {
			t.Errorf("%s is the same under seeds 1 and 2", f)
		}
	}
}

// TestDefaultDataset generates the default dataset once and checks it from
// every side.
func TestDefaultDataset(t *testing.T) {
	out := filepath.Join(t.TempDir(), "data")
	raw := generate(t, DefaultOptions(out))
	st := configs.DefaultStructures()

	var back dataset.Raw
	t.Run("dataset.json round-trips", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(out, "dataset.json"))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("decode dataset.json: %v", err)
		}
		if !reflect.DeepEqual(&back, raw) {
			t.Fatal("dataset.json differs from the returned dataset")
		}
		if back.Format != dataset.RawFormat || back.Seed != 1 || back.Name != Name {
			t.Errorf("header = %q %q seed %d", back.Format, back.Name, back.Seed)
		}
		readme, err := os.ReadFile(filepath.Join(out, "README.txt"))
		if err != nil || !strings.Contains(string(readme), "SYNTHETIC") || !strings.Contains(string(readme), "seed 1") {
			t.Errorf("README.txt missing or silent about being synthetic: %v", err)
		}
	})

	t.Run("cohorts", func(t *testing.T) {
		want := map[string][]string{}
		for i := 1; i <= 8; i++ {
			id := fmt.Sprintf("P%02d", i)
			c := []string{dataset.CohortPathology, dataset.CohortSequence}
			if i <= 4 {
				c = append(c, dataset.CohortCards)
			} else {
				c = append(c, dataset.CohortTGroups)
			}
			want[id] = append(c, dataset.CohortNGroups)
		}
		for i := 1; i <= 4; i++ {
			want[fmt.Sprintf("C%02d", i)] = []string{dataset.CohortCarePath}
			if i%2 == 1 || i == 4 {
				want[fmt.Sprintf("C%02d", i)] = append(want[fmt.Sprintf("C%02d", i)], dataset.CohortCareControl)
			}
		}
		if len(raw.Patients) != len(want) {
			t.Fatalf("%d patients, want %d", len(raw.Patients), len(want))
		}
		for _, p := range raw.Patients {
			if !slices.Equal(p.Cohorts, want[p.ID]) {
				t.Errorf("%s cohorts %v, want %v", p.ID, p.Cohorts, want[p.ID])
			}
			if (p.Episode != nil) != (p.ID[0] == 'C') {
				t.Errorf("%s: episode present = %v", p.ID, p.Episode != nil)
			}
		}
	})

	metas := map[string]imaging.SeriesMeta{} // by patient/sequence
	t.Run("series sidecars", func(t *testing.T) {
		for _, p := range raw.Patients {
			var seqs []string
			frames := map[string]string{}
			sixteen := 0
			for _, ref := range p.Series {
				seqs = append(seqs, ref.Sequence)
				m := readSidecar(t, out, ref)
				metas[p.ID+"/"+ref.Sequence] = m
				if m.Sequence != ref.Sequence {
					t.Errorf("%s: sidecar says %s", ref.Dir, m.Sequence)
				}
				plane := planeOf(m.Orientation)
				if plane == "" {
					t.Errorf("%s: orientation %v is none of the three planes", ref.Dir, m.Orientation)
				}
				if f, ok := frames[plane]; ok && f != m.FrameOfReference {
					t.Errorf("%s: %s series do not share a frame of reference", p.ID, plane)
				}
				frames[plane] = m.FrameOfReference
				if len(m.Slices) < 9 {
					t.Errorf("%s: %d slices; a sequence panel needs 9", ref.Dir, len(m.Slices))
				}
				if m.SliceThickness != 5 || m.PixelSpacing[0] <= 0 {
					t.Errorf("%s: thickness %v spacing %v", ref.Dir, m.SliceThickness, m.PixelSpacing)
				}
				instances := map[int]bool{}
				positions := map[float64]bool{}
				n := normal(m.Orientation)
				for _, sl := range m.Slices {
					if instances[sl.Instance] {
						t.Errorf("%s: instance %d twice", ref.Dir, sl.Instance)
					}
					instances[sl.Instance] = true
					positions[dot(n, sl.Position)] = true
					img := decodePNG(t, filepath.Join(out, ref.Dir, sl.File))
					if img.Bounds() != image.Rect(0, 0, 256, 256) {
						t.Errorf("%s/%s: bounds %v", ref.Dir, sl.File, img.Bounds())
					}
					switch img.(type) {
					case *image.Gray:
					case *image.Gray16:
						if sl.Instance == 1 {
							sixteen++
						}
					default:
						t.Errorf("%s/%s: %T, want grayscale", ref.Dir, sl.File, img)
					}
				}
				if len(positions) != len(m.Slices) {
					t.Errorf("%s: slices share positions along the normal", ref.Dir)
				}
			}
			if !slices.Equal(seqs, imaging.Sequences) {
				t.Errorf("%s: series %v, want %v", p.ID, seqs, imaging.Sequences)
			}
			if sixteen != 1 {
				t.Errorf("%s: %d 16-bit series, want 1", p.ID, sixteen)
			}
		}
	})

	t.Run("T2 is offset and listed out of order", func(t *testing.T) {
		for _, p := range raw.Patients {
			t1, t2 := metas[p.ID+"/"+imaging.SeqT1Ax], metas[p.ID+"/"+imaging.SeqT2Ax]
			var z1 []float64
			for _, s := range t1.Slices {
				z1 = append(z1, s.Position[2])
			}
			var listed []float64
			for _, s := range t2.Slices {
				near := math.Inf(1)
				for _, z := range z1 {
					near = min(near, math.Abs(z-s.Position[2]))
				}
				if near == 0 || near > t1.SliceThickness/2 {
					t.Errorf("%s: T2 instance %d is %.2f mm from the nearest T1 slice; want 0 < d ≤ half the thickness", p.ID, s.Instance, near)
				}
				listed = append(listed, s.Position[2])
			}
			if slices.IsSorted(listed) || slices.IsSortedFunc(listed, func(a, b float64) int { return int(math.Copysign(1, b-a)) }) {
				t.Errorf("%s: T2 sidecar lists its slices in spatial order", p.ID)
			}
		}
	})

	t.Run("pathology", func(t *testing.T) {
		labels := map[int]int{}
		for _, p := range raw.Patients {
			if p.Pathology == nil {
				t.Fatalf("%s has no slide", p.ID)
			}
			if p.ID[0] == 'P' {
				labels[p.Pathology.Label]++
			}
			img := decodePNG(t, filepath.Join(out, p.Pathology.File))
			if img.Bounds().Dx() != 2000 || img.Bounds().Dy() != 1500 {
				t.Errorf("%s: slide %v", p.ID, img.Bounds())
			}
			if _, ok := img.(*image.RGBA); !ok {
				t.Errorf("%s: slide decodes to %T, want RGB", p.ID, img)
			}
		}
		if labels[0] == 0 || labels[1] == 0 {
			t.Errorf("L3 pathology labels are not mixed: %v", labels)
		}
	})

	t.Run("labels", func(t *testing.T) {
		cards := st.Cards()
		tSeen, nSeen := map[string]bool{}, map[string]bool{}
		discordant := 0
		for _, p := range raw.Patients {
			if len(p.Structures) != 27 || len(cards) != 27 {
				t.Fatalf("%s: %d findings for %d cards, want 27", p.ID, len(p.Structures), len(cards))
			}
			invaded := map[string]bool{}
			for i, f := range p.Structures {
				key := f.Structure
				if f.Side != "" {
					key += "/" + f.Side
				}
				if key != cards[i] {
					t.Errorf("%s finding %d is %s, want %s", p.ID, i, key, cards[i])
				}
				if f.Invasion != 0 && f.Invasion != 1 {
					t.Errorf("%s %s: invasion %d", p.ID, key, f.Invasion)
				}
				if f.Invasion == 1 {
					invaded[f.Structure] = true
				}
			}
			var ids []string
			for _, id := range st.IDs() {
				if invaded[id] {
					ids = append(ids, id)
				}
			}
			if rule := st.TRule(ids); rule != p.TStage {
				discordant++
				if p.ID != DiscordantPatient {
					t.Errorf("%s: T stage %s but the T rule gives %s for %v", p.ID, p.TStage, rule, ids)
				}
			}
			if p.ID[0] == 'P' {
				tSeen[p.TStage], nSeen[p.NStage] = true, true
			}
		}
		if discordant != 1 {
			t.Errorf("%d patients disagree with the T rule, want exactly %s", discordant, DiscordantPatient)
		}
		for _, s := range []string{"T1", "T2", "T3", "T4", "N0", "N1", "N2", "N3"} {
			if !tSeen[s] && !nSeen[s] {
				t.Errorf("no L3 patient is %s", s)
			}
		}
	})

	t.Run("boxes", func(t *testing.T) {
		for _, p := range raw.Patients {
			for _, f := range p.Structures {
				bySeq := map[string][]dataset.Box{}
				for _, b := range f.Boxes {
					bySeq[b.Sequence] = append(bySeq[b.Sequence], b)
				}
				if len(bySeq) != 4 {
					t.Errorf("%s %s %s: boxes on %d sequences, want the 4 card sequences", p.ID, f.Structure, f.Side, len(bySeq))
				}
				for _, seq := range cardSequences {
					m := metas[p.ID+"/"+seq]
					exists := map[int]bool{}
					for _, sl := range m.Slices {
						exists[sl.Instance] = true
					}
					boxes := bySeq[seq]
					if len(boxes) < 3 {
						t.Errorf("%s %s %s: %d boxes on %s, want ≥ 3", p.ID, f.Structure, f.Side, len(boxes), seq)
						continue
					}
					maxArea, atMax := 0, 0
					for i, b := range boxes {
						if !exists[b.Instance] {
							t.Errorf("%s %s: box on missing instance %d of %s", p.ID, f.Structure, b.Instance, seq)
						}
						if i > 0 && b.Instance != boxes[i-1].Instance+1 {
							t.Errorf("%s %s %s: instances %d, %d on %s are not consecutive", p.ID, f.Structure, f.Side, boxes[i-1].Instance, b.Instance, seq)
						}
						if b.X0 < 0 || b.Y0 < 0 || b.X1 > 256 || b.Y1 > 256 || b.Area() == 0 {
							t.Errorf("%s %s: box %+v outside the 256×256 grid or empty", p.ID, f.Structure, b)
						}
						switch a := b.Area(); {
						case a > maxArea:
							maxArea, atMax = a, 1
						case a == maxArea:
							atMax++
						}
					}
					if atMax != 1 {
						t.Errorf("%s %s %s: %d boxes on %s share the largest area", p.ID, f.Structure, f.Side, atMax, seq)
					}
				}
			}
		}
	})

	t.Run("invaded box centres show tumour", func(t *testing.T) {
		tumourLevel := float64(levels(contrastT1C)[tumour])
		for _, p := range raw.Patients {
			ref := p.Series[slices.IndexFunc(p.Series, func(s dataset.SeriesRef) bool { return s.Sequence == imaging.SeqT1CAx })]
			for _, f := range p.Structures {
				if f.Invasion == 0 {
					continue
				}
				var best dataset.Box
				for _, b := range f.Boxes {
					if b.Sequence == imaging.SeqT1CAx && b.Area() > best.Area() {
						best = b
					}
				}
				img := decodePNG(t, filepath.Join(out, ref.Dir, fmt.Sprintf("%04d.png", best.Instance)))
				v := grey(img, (best.X0+best.X1-1)/2, (best.Y0+best.Y1-1)/2)
				if math.Abs(v-tumourLevel) > 15 {
					t.Errorf("%s %s %s: grey %.0f at the box centre on T1+C_Ax, want tumour (%.0f)", p.ID, f.Structure, f.Side, v, tumourLevel)
				}
			}
		}
	})

	t.Run("coverage", func(t *testing.T) {
		for _, p := range raw.Patients {
			m := metas[p.ID+"/"+imaging.SeqT1Ax]
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, s := range m.Slices {
				lo, hi = min(lo, s.Position[2]), max(hi, s.Position[2])
			}
			extent := dataset.Range{From: lo, To: hi}
			c := p.Coverage
			for _, z := range []float64{c.T.From, c.T.To, c.N.From, c.N.To} {
				if !extent.Contains(z) {
					t.Errorf("%s: coverage end %.2f outside the axial series [%.2f, %.2f]", p.ID, z, lo, hi)
				}
			}
			tLen, nLen := math.Abs(c.T.From-c.T.To), math.Abs(c.N.From-c.N.To)
			if nLen <= tLen || c.N.From >= c.T.From {
				t.Errorf("%s: N range %+v must start below the T range %+v and be longer", p.ID, c.N, c.T)
			}
		}
	})

	t.Run("episodes", func(t *testing.T) {
		excluded := 0
		injects, supplied := map[string]bool{}, map[string]bool{}
		for _, p := range raw.Patients {
			if p.Episode == nil {
				continue
			}
			checkEpisode(t, p, st)
			// The L6 controls replace or withhold image findings: each
			// control question injects one, and none is a main question.
			for _, q := range p.Episode.ControlQuestions {
				if len(q.Inject) == 0 || q.Excluded || slices.ContainsFunc(p.Episode.Questions, func(m dataset.CareQuestion) bool {
					return m.ID == q.ID || m.Checkpoint == q.Checkpoint
				}) {
					t.Errorf("%s control question %s: inject %v, excluded %v, or the same as a main question", p.ID, q.ID, q.Inject, q.Excluded)
				}
			}
			for _, q := range p.Episode.Questions {
				if q.Excluded {
					excluded++
				}
				for _, in := range q.Inject {
					injects[in] = true
				}
				for _, s := range q.Supplied {
					supplied[s.Field] = true
				}
			}
		}
		if excluded != 1 {
			t.Errorf("%d excluded care questions, want 1", excluded)
		}
		for _, in := range []string{dataset.InjectPathology, dataset.InjectTStage, dataset.InjectStructures} {
			if !injects[in] {
				t.Errorf("no question injects %s", in)
			}
		}
		for _, f := range []string{"N stage", "M stage", "Overall stage"} {
			if !supplied[f] {
				t.Errorf("no question supplies %s", f)
			}
		}
	})

	t.Run("measure", func(t *testing.T) {
		s, err := Measure(out)
		if err != nil {
			t.Fatal(err)
		}
		if want := 12 * (1 + 3*axialSlices + 2*coronalSlices + 2*sagittalSlice); s.Images != want {
			t.Errorf("%d images, want %d", s.Images, want)
		}
		if s.Files != s.Images+12*7+2 || s.Bytes <= 0 {
			t.Errorf("stats %+v", s)
		}
	})
}

// checkEpisode checks one episode's shape and that its reference answers
// follow from the patient's labels.
func checkEpisode(t *testing.T, p dataset.Patient, st *configs.Structures) {
	t.Helper()
	ep := p.Episode
	if len(ep.Context) == 0 {
		t.Errorf("%s: empty clinical context", p.ID)
	}
	for _, c := range ep.Context {
		if c.When == "" || c.Text == "" {
			t.Errorf("%s: context entry %+v", p.ID, c)
		}
	}
	if n := len(ep.Questions); n < 2 || n > 4 {
		t.Errorf("%s: %d questions, want 2..4", p.ID, n)
	}
	var tn [2]int
	fmt.Sscanf(p.TStage+p.NStage, "T%dN%d", &tn[0], &tn[1])
	var invaded []string
	for _, id := range st.IDs() {
		for _, f := range p.Structures {
			if f.Structure == id && f.Invasion == 1 {
				invaded = append(invaded, strings.ReplaceAll(id, "_", " "))
				break
			}
		}
	}
	for i, q := range ep.Questions {
		if q.ID != fmt.Sprintf("%s-Q%d", p.ID, i+1) || q.Question == "" || q.Checkpoint == "" {
			t.Errorf("%s: question %d: %+v", p.ID, i, q)
		}
		if n := len(q.Options); n < 3 || n > 5 {
			t.Errorf("%s: %d options, want 3..5", q.ID, n)
		}
		answer := ""
		for j, o := range q.Options {
			if o.Letter != string(rune('A'+j)) || o.Text == "" {
				t.Errorf("%s: option %d is %+v", q.ID, j, o)
			}
			if o.Letter == q.Answer {
				answer = o.Text
			}
		}
		if answer == "" {
			t.Errorf("%s: answer %q is no option", q.ID, q.Answer)
		}
		for _, in := range q.Inject {
			if in != dataset.InjectPathology && in != dataset.InjectTStage && in != dataset.InjectStructures {
				t.Errorf("%s: unknown injected finding %q", q.ID, in)
			}
		}
		switch {
		case strings.Contains(q.Question, "initial treatment"):
			want := map[string]string{"I": "radiotherapy alone", "II": "Concurrent cisplatin", "III": "Induction", "IVA": "Induction"}[overallStage(tn[0], tn[1])]
			if !strings.Contains(answer, want) {
				t.Errorf("%s (T%dN%d): answer %q, want %q", q.ID, tn[0], tn[1], answer, want)
			}
		case strings.Contains(q.Question, "target volume"):
			want := "The nasopharynx with the " + strings.Join(invaded, ", ")
			if len(invaded) == 0 {
				want = "The nasopharynx alone: no adjacent structure is invaded"
			}
			if answer != want {
				t.Errorf("%s: answer %q, want %q", q.ID, answer, want)
			}
		}
	}
}

func readSidecar(t *testing.T, root string, ref dataset.SeriesRef) imaging.SeriesMeta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ref.Dir, "series.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m imaging.SeriesMeta
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s/series.json: %v", ref.Dir, err)
	}
	return m
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// grey returns the 8-bit grey level of a Gray or Gray16 (12-bit) pixel.
func grey(img image.Image, x, y int) float64 {
	switch m := img.(type) {
	case *image.Gray16:
		return float64(m.Gray16At(x, y).Y) / 16
	case *image.Gray:
		return float64(m.GrayAt(x, y).Y)
	}
	return math.NaN()
}

func planeOf(o [6]float64) string {
	for _, p := range []string{axial, coronal, sagittal} {
		if orientation(p) == o {
			return p
		}
	}
	return ""
}

func normal(o [6]float64) [3]float64 {
	return [3]float64{o[1]*o[5] - o[2]*o[4], o[2]*o[3] - o[0]*o[5], o[0]*o[4] - o[1]*o[3]}
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func TestOutputFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "data")

	// A folder with other files is never touched.
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := smallOptions(out, 1)
	opt.Overwrite = true
	if _, err := Generate(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "no dataset.json") {
		t.Fatalf("Generate into a foreign folder: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the foreign file is gone: %v", err)
	}
	if err := os.Remove(keep); err != nil {
		t.Fatal(err)
	}

	// An empty folder is filled; a second run needs Overwrite.
	generate(t, smallOptions(out, 1))
	if _, err := Generate(context.Background(), smallOptions(out, 2)); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second Generate without Overwrite: %v", err)
	}
	stale := filepath.Join(out, "stale.png")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	raw := generate(t, opt)
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Overwrite kept a stale file: %v", err)
	}
	if raw.Seed != 1 {
		t.Errorf("seed %d", raw.Seed)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("staging folders left beside the dataset: %v", entries)
	}
}

func TestGenerateCancelled(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Generate(ctx, smallOptions(out, 1))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate after cancel: %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a cancelled run left %v", entries)
	}
}

func TestOptionsErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	for _, tc := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Out = " " }, "--out"},
		{func(o *Options) { o.Patients = -1 }, "patients is -1"},
		{func(o *Options) { o.Patients = 100 }, "patients is 100"},
		{func(o *Options) { o.CarePath = -2 }, "carepath patients is -2"},
		{func(o *Options) { o.ImageSize = 10 }, "image size is 10"},
		{func(o *Options) { o.SlideWidth = 9000 }, "slide width is 9000"},
		{func(o *Options) { o.Workers = -1 }, "workers is -1"},
		{func(o *Options) { o.Patients, o.CarePath = 0, 0 }, "nothing asked for"},
		{func(o *Options) { o.Guideline = 201 }, "guideline questions is 201"},
	} {
		opt := smallOptions(out, 1)
		tc.mod(&opt)
		_, err := Generate(context.Background(), opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate(%+v) = %v, want an error about %q", opt, err, tc.want)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("invalid options created %s", out)
	}
}

func TestSmallestDataset(t *testing.T) {
	opt := smallOptions(filepath.Join(t.TempDir(), "d"), 3)
	opt.Patients, opt.CarePath, opt.ImageSize = 1, 1, 64
	raw := generate(t, opt)
	if len(raw.Patients) != 2 {
		t.Fatalf("%d patients", len(raw.Patients))
	}
	p := raw.Patients[0]
	for _, c := range []string{dataset.CohortCards, dataset.CohortTGroups} {
		if !slices.Contains(p.Cohorts, c) {
			t.Errorf("the only L3 patient is not in cohort %s: %v", c, p.Cohorts)
		}
	}
	qs := raw.Patients[1].Episode.Questions
	if !qs[len(qs)-1].Excluded {
		t.Error("the only CarePath patient's last question is not excluded")
	}

	// Either kind of patient may be left out.
	opt.Out, opt.Patients = filepath.Join(t.TempDir(), "carepath-only"), 0
	if raw := generate(t, opt); len(raw.Patients) != 1 || raw.Patients[0].ID != "C01" {
		t.Errorf("CarePath-only dataset: %+v", raw.Patients)
	}
	opt.Out, opt.Patients, opt.CarePath = filepath.Join(t.TempDir(), "l3-only"), 2, 0
	if raw := generate(t, opt); len(raw.Patients) != 2 || raw.Patients[1].Episode != nil {
		t.Errorf("L3-only dataset has %d patients", len(raw.Patients))
	}
}
