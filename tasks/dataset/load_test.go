package dataset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRaw(t *testing.T, dir string, raw string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "dataset.json"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRawReportsEveryProblemWithItsPlace(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "slide.png"), []byte("x"), 0o644)
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "escape"))
	writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[
 {"id":"P1","cohorts":["pathology","staging"],"t_stage":"T5","pathology":{"file":"p/slide.png","label":2}},
 {"id":"P1","cohorts":[],"pathology":{"file":"../secret.png","label":1}},
 {"id":"P3","cohorts":[],"series":[{"sequence":"T1_Ax","dir":"escape"}],
  "structures":[{"structure":"hippocampus","invasion":0,"boxes":[]}],
  "episode":{"context":[],"questions":[{"id":"q","checkpoint":"c","question":"?","options":[{"letter":"A","text":"a"}],"answer":"C","inject":["pathology","n_stage"]}]}}
]}`)
	_, err := LoadRaw(dir, []string{"clivus"})
	var ps Problems
	if err == nil {
		t.Fatal("no error")
	}
	ps, _ = err.(Problems)
	want := []string{
		`patients[0] (P1): unknown cohort "staging"`,
		`patients[0] (P1): t_stage "T5" is not T1..T4`,
		`patients[0] (P1): pathology label 2 is not 0 or 1`,
		`patients[1] (P1): duplicate patient id "P1"`,
		`patients[1] (P1): pathology: path "../secret.png" leaves the dataset folder`,
		`patients[2] (P3): series T1_Ax: path "escape" links outside the dataset folder`,
		`patients[2] (P3): unknown structure "hippocampus"`,
		`patients[2] (P3): care question q: answer "C" is not one of its options`,
		`patients[2] (P3): care question q: inject "n_stage" is not pathology, t_stage or structures`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing problem %q in:\n%v", w, err)
		}
	}
	if len(ps) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
	if !strings.Contains(ps[0].Error(), filepath.Join(dir, "dataset.json")) {
		t.Errorf("problem does not name the file: %v", ps[0])
	}
}

// TestSeriesAsFileLists: a series is a folder or a list of files inside
// the dataset, never both, never neither; every listed file is checked.
func TestSeriesAsFileLists(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pacs", "ST1"), 0o755)
	for _, f := range []string{"IM1", "IM2"} {
		os.WriteFile(filepath.Join(dir, "pacs", "ST1", f), []byte("x"), 0o644)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "IM5"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "escape"))
	writeRaw(t, dir, `{"format":"npcorch-dataset/1","name":"x","patients":[
 {"id":"P1","cohorts":["sequence"],"series":[{"sequence":"T1_Ax","files":["pacs/ST1/IM1","pacs/ST1/IM2"]}]},
 {"id":"P2","cohorts":["sequence"],"series":[{"sequence":"T1_Ax","dir":"pacs/ST1","files":["pacs/ST1/IM1"]},
  {"sequence":"T2_Ax"},
  {"sequence":"T1+C_Ax","files":["pacs/ST1/IM1","pacs/ST1/IM3","../IM4","escape/IM5","pacs/ST1/IM1"]}]}
]}`)
	_, err := LoadRaw(dir, nil)
	ps, _ := err.(Problems)
	want := []string{
		`patients[1] (P2): series T1_Ax: both a folder ("pacs/ST1") and a list of 1 files: give one`,
		`patients[1] (P2): series T2_Ax: neither a folder (dir) nor a list of files (files)`,
		`patients[1] (P2): series T1+C_Ax: path "pacs/ST1/IM3" does not exist`,
		`patients[1] (P2): series T1+C_Ax: path "../IM4" leaves the dataset folder`,
		`patients[1] (P2): series T1+C_Ax: path "escape/IM5" links outside the dataset folder`,
		`patients[1] (P2): series T1+C_Ax: file "pacs/ST1/IM1" listed twice`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing problem %q in:\n%v", w, err)
		}
	}
	if len(ps) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
	raw := Raw{Patients: []Patient{{Series: []SeriesRef{{Sequence: "T1_Ax", Dir: "d"}, {Sequence: "T2_Ax", Files: []string{"a"}}}}}}
	b, _ := json.Marshal(raw.Patients[0].Series)
	if string(b) != `[{"sequence":"T1_Ax","dir":"d"},{"sequence":"T2_Ax","files":["a"]}]` {
		t.Errorf("series written as %s", b)
	}
}

func TestLoadRawSyntaxErrorNamesLine(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, dir, "{\n \"format\": \"npcorch-dataset/1\",\n \"patients\": [,]\n}")
	_, err := LoadRaw(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "dataset.json: line 3:") {
		t.Fatalf("err = %v", err)
	}
}

// A misspelt key is named by its line, column and place, the item's id
// included, like a value of the wrong type; the same word earlier as a
// value, or as a key the first time it is not misspelt, does not count.
func TestLoadRawUnknownFieldNamesLineAndItem(t *testing.T) {
	dir := t.TempDir()
	head := "{\"format\": \"npcorch-dataset/1\", \"patients\": [],\n"
	for doc, want := range map[string]string{
		`{"format":"npcorch-dataset/1","patients":[],"extra":1}`: `dataset.json: line 1, column 45: extra: unknown field "extra"`,
		head + " \"guideline\": [\n" + `  {"id":"G001","source":"answr","question":"q","options":[],"answer":["A"]},` + "\n" +
			`  {"id":"G002","source":"CSCO","question":"q","options":[],"answr":["E"]}` + "\n ]}": `dataset.json: line 4, column 60: guideline[1] (G002).answr: unknown field "answr"`,
	} {
		writeRaw(t, dir, doc)
		_, err := LoadRaw(dir, nil)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "check its spelling") {
			t.Errorf("%s:\nerr  %v\nwant %s; check its spelling", doc, err, want)
		}
	}
}

func TestLoadPreparedChecksImagePaths(t *testing.T) {
	dir := t.TempDir()
	m := Prepared{Format: PreparedFormat, Patients: []PreparedPatient{{ID: "P1",
		Overview: &Image{Path: "missing.png"}, Pages: []Image{{Path: "/etc/passwd"}}}}}
	data, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644)
	_, err := LoadPrepared(dir)
	if err == nil || !strings.Contains(err.Error(), `path "missing.png" does not exist`) || !strings.Contains(err.Error(), `"/etc/passwd" must be relative`) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzLoadRaw(f *testing.F) {
	f.Add([]byte(`{"format":"npcorch-dataset/1","patients":[{"id":"P1","cohorts":["cards"],"structures":[{"structure":"clivus","invasion":1,"boxes":[]}]}]}`))
	f.Add([]byte(`{"patients":[{"episode":{"questions":[{"options":[]}]}}]}`))
	f.Add([]byte(`{"guideline":[{"id":"G1","answer":"E"}],"longitudinal":[{"checkpoints":[{"day":"9"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dataset.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		LoadRaw(dir, []string{"clivus"}) // must not panic
	})
}

// TestLoadRawRefusesAnotherFormat (issue 18): a dataset.json of another
// format is an error, not a problem to go past, for every command alike
// (prep refused it already; run went on and built items from it).
func TestLoadRawRefusesAnotherFormat(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, dir, `{"format":"npcorch-dataset/0","name":"x","patients":[]}`)
	raw, err := LoadRaw(dir, nil)
	if err == nil || raw != nil {
		t.Fatalf("another format: raw %v, err %v; want no dataset and an error", raw, err)
	}
	var ps Problems
	if errors.As(err, &ps) {
		t.Errorf("another format came back as problems to go past: %v", err)
	}
	for _, want := range []string{filepath.Join(dir, "dataset.json"), `"npcorch-dataset/0"`, `"npcorch-dataset/1"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
}

// TestLoadRawMissingFileSaysWhatToDo: a folder without dataset.json says
// how to make one.
func TestLoadRawMissingFileSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadRaw(dir, nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "dataset.json")) || !strings.Contains(err.Error(), "npcorch synth") {
		t.Fatalf("err = %v", err)
	}
}

// TestLoadRawTypeErrorNamesLineItemAndType: a value of the wrong type is
// named by its line and column, its place with the item's id and the type
// wanted; it used to be "json: cannot unmarshal string into Go struct
// field GuidelineQuestion.guideline.Choice.answer of type []string".
func TestLoadRawTypeErrorNamesLineItemAndType(t *testing.T) {
	const head = "{\"format\": \"npcorch-dataset/1\",\n \"patients\": [],\n"
	const g1 = `  {"id":"G001","source":"CSCO","question":"q","options":[{"letter":"A","text":"a"},{"letter":"B","text":"b"}],"answer":["A"]}`
	for in, want := range map[string]string{
		head + " \"guideline\": [\n" + g1 + ",\n" + `  {"id":"G002","source":"CSCO","question":"q","options":[],"answer":"E"}` + "\n ]}":          `dataset.json: line 5, column 69: guideline[1] (G002).answer: want a list of strings, like ["E"], got a string`,
		head + " \"guideline\": [\n" + g1 + ",\n" + `  {"id":"G002","source":"CSCO","question":"q","options":{"A":"a"},"answer":["A"]}` + "\n ]}": `dataset.json: line 5, column 57: guideline[1] (G002).options: want a list of objects [{...}, ...], got an object`,
		head + " \"longitudinal\": [{\"patient\":\"L01\",\"records\":[],\n  \"checkpoints\":[{\"id\":\"c1\",\"day\":\"9\"}]}]}":                   `dataset.json: line 4, column 35: longitudinal[0] (L01).checkpoints[0] (c1).day: want a whole number, got a string`,
		"{\"format\": \"npcorch-dataset/1\", \"patients\": [{\"id\": 5}]}":                                                                        `dataset.json: line 1, column 53: patients[0].id: want a string, got a number`,
		`["not", "an", "object"]`: `dataset.json: line 1, column 1: the top level: want an object {...}, got a list`,
	} {
		dir := t.TempDir()
		writeRaw(t, dir, in)
		_, err := LoadRaw(dir, nil)
		if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "Go struct") {
			t.Errorf("%s:\n got %v\nwant it to end in %s", in, err, want)
		}
	}
}
