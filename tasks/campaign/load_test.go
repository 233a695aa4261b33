package campaign

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/npcbench"
)

// writeBench writes a raw dataset of two pathology patients and a prepared
// manifest with P1's overview only, and returns the source.
func writeBench(t *testing.T, rawJSON string) Source {
	t.Helper()
	dir := t.TempDir()
	raw, prep := filepath.Join(dir, "raw"), filepath.Join(dir, "prep")
	files := map[string]string{
		filepath.Join(raw, "P1.png"): "slide", filepath.Join(raw, "P2.png"): "slide",
		filepath.Join(raw, "dataset.json"): rawJSON,
		filepath.Join(prep, "P1.png"):      "png",
		filepath.Join(prep, "manifest.json"): `{"format":"npcorch-prepared/1","patients":[
			{"id":"P1","overview":{"path":"P1.png","width":8,"height":8}}]}`,
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Source{Raw: raw, Prepared: prep, Tasks: []string{npcbench.Pathology}}
}

const twoPatients = `{"format":"npcorch-dataset/1","name":"two","patients":[
	{"id":"P1","cohorts":["pathology"],"pathology":{"file":"P1.png","label":1},"t_stage":"T5"},
	{"id":"P2","cohorts":["pathology"],"pathology":{"file":"P2.png","label":0}}]}`

// TestLoadBenchReportsEveryProblemByName (issue 18): run, score and plan
// load the dataset through one function with one policy. A problem inside
// dataset.json and an item that cannot be built are returned by name, and
// the rest is loaded; before, score and plan dropped both in silence.
func TestLoadBenchReportsEveryProblemByName(t *testing.T) {
	src := writeBench(t, twoPatients)
	b, err := LoadBench(Benchmark(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Items) != 1 || b.Items[0].ID != "pathology/P1" {
		t.Errorf("items %v, want P1's", b.Items)
	}
	if b.Problems.Len() != 2 {
		t.Fatalf("%d problems, want 2: %+v", b.Problems.Len(), b.Problems)
	}
	var w bytes.Buffer
	b.Problems.Report(&w)
	want := "dataset problem: " + filepath.Join(src.Raw, "dataset.json") + `: patients[0] (P1): t_stage "T5" is not T1..T4` + "\n" +
		"item problem: pathology/P2: no prepared images for this patient; run `npcorch prep` on the dataset again\n"
	if w.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", w.String(), want)
	}
}

// TestLoadBenchFatalErrors: what cannot be read as a whole stops every
// command alike, saying what to do.
func TestLoadBenchFatalErrors(t *testing.T) {
	for name, c := range map[string]struct {
		raw   string
		edit  func(Source)
		wants []string
	}{
		"another format": {raw: strings.Replace(twoPatients, "npcorch-dataset/1", "npcorch-dataset/9", 1),
			wants: []string{"dataset.json", `format is "npcorch-dataset/9"`}},
		"unknown field": {raw: strings.Replace(twoPatients, `"name"`, `"nmae"`, 1), wants: []string{`unknown field "nmae"`}},
		"no manifest": {raw: twoPatients, edit: func(s Source) { os.Remove(filepath.Join(s.Prepared, "manifest.json")) },
			wants: []string{"manifest.json", "run `npcorch prep --data "}},
		"image missing": {raw: twoPatients, edit: func(s Source) { os.Remove(filepath.Join(s.Prepared, "P1.png")) },
			wants: []string{`path "P1.png" does not exist`, "run `npcorch prep --data "}},
	} {
		t.Run(name, func(t *testing.T) {
			src := writeBench(t, c.raw)
			if c.edit != nil {
				c.edit(src)
			}
			b, err := LoadBench(Benchmark(), src)
			if err == nil || b != nil {
				t.Fatalf("loaded %v, err %v; want an error", b, err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

// TestLoadBenchReportsAStaleManifest: a prepared folder made from another
// dataset.json (edited since, or another dataset's) is reported by name
// with what to do; before, its dataset_sha256 was written and never read.
func TestLoadBenchReportsAStaleManifest(t *testing.T) {
	src := writeBench(t, twoPatients)
	sum := sha256.Sum256([]byte(twoPatients))
	man := filepath.Join(src.Prepared, "manifest.json")
	write := func(sha string) {
		t.Helper()
		data := `{"format":"npcorch-prepared/1","dataset_sha256":"` + sha + `","patients":[
			{"id":"P1","overview":{"path":"P1.png","width":8,"height":8}}]}`
		if err := os.WriteFile(man, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(hex.EncodeToString(sum[:]))
	b, err := LoadBench(Benchmark(), src)
	if err != nil || b.Problems.Len() != 2 {
		t.Fatalf("matching manifest: %v, %d problems (want the 2 of the dataset)", err, b.Problems.Len())
	}
	write(strings.Repeat("ab", 32))
	b, err = LoadBench(Benchmark(), src)
	if err != nil || b.Problems.Len() != 3 {
		t.Fatalf("stale manifest: %v, %d problems, want 3", err, b.Problems.Len())
	}
	var w bytes.Buffer
	b.Problems.Report(&w)
	if !strings.Contains(w.String(), man+": was made from another dataset.json (sha256 abababababab…") ||
		!strings.Contains(w.String(), "run `npcorch prep --data "+src.Raw) {
		t.Errorf("report lacks the stale manifest:\n%s", w.String())
	}
}
