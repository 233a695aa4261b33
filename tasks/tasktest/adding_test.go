package tasktest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/launcher/simengine"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/send"
)

// The task added: the pathology overview as a two-option question. Its
// descriptor, its prompt template and its model settings are all it takes
// (docs/architecture.md, "Adding a task"): the steps below are the files a
// real task would live in.

// PathologyChoice is the added task's key.
const PathologyChoice = "pathology_choice"

// Step 1, tasks/npcbench/pathologychoice.go: the descriptor.
func pathologyChoice() *tasks.Task {
	return &tasks.Task{
		Key: PathologyChoice, Level: "L3", Title: "Pathology as a choice (test task)",
		Cohort:      dataset.CohortPathology,
		Images:      []string{dataset.KindOverview},
		Build:       buildChoice,
		Answer:      func(_ tasks.Item, content string) extract.Label { return extract.Care(content, []string{"A", "B"}) },
		Classes:     []string{"A", "B"},
		ScoredAlone: true,
		Sim: tasks.Sim{Marker: "Which option describes this overview", Answers: func(it tasks.Item) tasks.SimAnswers {
			wrong := map[string]string{"A": "B", "B": "A"}[it.Gold.Label]
			return tasks.SimAnswers{Right: "Answer: " + it.Gold.Label, Wrong: []string{"Answer: " + wrong}, Constant: "A"}
		}},
		Paper: schedule.RequestMix{Requests: 69, MinImages: 1, MaxImages: 1, ImageTokens: schedule.ImageTokens(512, 1644),
			ImagePixels: 512 * 1644, TextTokens: 200, MaxTokens: 256},
	}
}

// buildChoice makes one item per patient of the pathology cohort: its
// overview, "B" for a carcinoma and "A" for normal tissue.
func buildChoice(b *tasks.Builder) {
	for p, pp := range b.Patients() {
		if p.Pathology == nil || pp.Overview == nil {
			b.Problem(b.ItemID(p.ID), "the patient has no pathology overview")
			continue
		}
		gold := map[int]string{0: "A", 1: "B"}[p.Pathology.Label]
		b.Add(tasks.Item{ID: b.ItemID(p.ID), Patient: p.ID, Images: []dataset.Image{*pp.Overview}, Gold: tasks.Gold{Label: gold}})
	}
}

// Step 2, configs/prompts/pathology_choice.tmpl: the prompt template.
var prompts = fstest.MapFS{PathologyChoice + ".tmpl": {Data: []byte(
	"Which option describes this overview of a nasopharyngeal biopsy?\nA. normal tissue\nB. nasopharyngeal carcinoma\nOutput only one option letter.\n")}}

// Step 3, the registration in npcbench.Registry (here a registry of its
// own: the added task and its Table 1 column).
func registry(t *testing.T) *tasks.Registry {
	t.Helper()
	reg, err := tasks.NewRegistry(tasks.Benchmark{Structures: configs.DefaultStructures(),
		Tasks:   []*tasks.Task{pathologyChoice()},
		Scoring: &score.Card{Table: []score.Column{score.TaskColumn("Choice", "L3", PathologyChoice)}}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Step 4, configs/models.yaml: the model's settings for the task.
func model() configs.Model {
	return configs.Model{Name: "toy-model", Engine: configs.Engine{Kind: configs.EngineSim},
		Tasks: map[string]configs.TaskSettings{PathologyChoice: {MaxTokens: 64}}}
}

// TestAddingATask takes the added task from a dataset to its scores: items
// built, the prompt rendered, the sim key written, every request answered
// by the simulated engine (a real one, in process) under the oracle and
// the constant policy, journaled, scored into Table 1, and planned at the
// paper's scale.
func TestAddingATask(t *testing.T) {
	reg := registry(t)
	root := t.TempDir()
	raw, prep := smallDataset(t, root, []int{1, 0, 1, 1})
	items, problems, err := tasks.BuildItems(reg, raw, prep, []string{PathologyChoice})
	if err != nil || len(problems) != 1 || len(items) != 4 || items[1].Gold.Label != "A" || items[1].Task != PathologyChoice {
		t.Fatalf("items %+v, problems %v, %v; want 4 items and the patient without a slide named", items, problems, err)
	}
	p, err := tasks.LoadPrompts(prompts, ".", reg)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := p.Render(items[0], nil); err != nil || !strings.HasPrefix(text, "Which option describes this overview") {
		t.Fatalf("prompt %q, %v", text, err)
	}
	b := tasks.RequestBuilder{Model: model(), Media: configs.MediaBase64, Root: root}
	for policy, want := range map[string]float64{"oracle": 100, "constant": 25} {
		run := t.TempDir()
		keyFile := filepath.Join(t.TempDir(), "simkey.json")
		key, err := tasks.BuildSimKey(reg, b, p, tasks.ItemList(items).Items())
		if err != nil {
			t.Fatal(err)
		}
		if err := key.Write(keyFile); err != nil {
			t.Fatal(err)
		}
		ep := startEngine(t, "toy-model", "--sim-key", keyFile, "--sim-policy", policy)
		sendAll(t, reg, p, b, ep, run, items)
		j, err := journal.Read(run)
		if err != nil {
			t.Fatal(err)
		}
		res, err := score.ScoreRun(reg, "toy", raw, items, j, score.RunModels("toy-model"), 1, score.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		acc := res.Models[0].Task(PathologyChoice).Accuracy
		var md bytes.Buffer
		if err := res.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if acc.Percent != want || acc.Denominator != 4 || !strings.Contains(md.String(), "| L3 Choice |") {
			t.Errorf("%s: accuracy %v of %d, want %v of 4; Table 1:\n%s", policy, acc.Percent, acc.Denominator, want, md.String())
		}
	}
	wls, err := reg.PaperScale([]configs.Model{model()}, nil)
	if err != nil || len(wls) != 1 || wls[0].Task != PathologyChoice || wls[0].Requests != 69 || wls[0].OutputTokens != 69*64 {
		t.Errorf("paper-scale plan %+v, %v; want 69 requests of 64 output tokens", wls, err)
	}
}

// smallDataset writes one overview per labelled patient, and one patient
// of the cohort without a slide.
func smallDataset(t *testing.T, root string, labels []int) (*dataset.Raw, *dataset.Prepared) {
	t.Helper()
	raw := &dataset.Raw{Format: dataset.RawFormat, Name: "toy"}
	prep := &dataset.Prepared{Format: dataset.PreparedFormat}
	for i, label := range labels {
		id := fmt.Sprintf("P%d", i+1)
		data := grayPNG(t, uint8(i))
		name := id + ".png"
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		raw.Patients = append(raw.Patients, dataset.Patient{ID: id, Cohorts: []string{dataset.CohortPathology},
			Pathology: &dataset.Slide{File: id + ".svs", Label: label}})
		prep.Patients = append(prep.Patients, dataset.PreparedPatient{ID: id,
			Overview: &dataset.Image{Path: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data)), Width: 1, Height: 1}})
	}
	raw.Patients = append(raw.Patients, dataset.Patient{ID: "P0", Cohorts: []string{dataset.CohortPathology}})
	prep.Patients = append(prep.Patients, dataset.PreparedPatient{ID: "P0"})
	return raw, prep
}

// grayPNG is a 2×2 PNG of one gray level.
func grayPNG(t *testing.T, level uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 2, 2))
	for i := range img.Pix {
		img.Pix[i] = level
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sendAll sends every item to the engine and journals the answers in run.
func sendAll(t *testing.T, reg *tasks.Registry, p *tasks.Prompts, b tasks.RequestBuilder, ep launcher.Endpoint, run string, items []tasks.Item) {
	t.Helper()
	j, err := journal.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	c := inference.NewClient(configs.ClientSettings{ConnectTimeout: 2 * time.Second, FirstTokenTimeout: 10 * time.Second,
		ChunkTimeout: 10 * time.Second, TotalTimeout: 20 * time.Second})
	defer c.Close()
	r := &send.Runner{Client: c, Journal: j, Prompts: p, Tasks: reg, Retries: 1, Backoff: time.Millisecond}
	s, err := r.Run(context.Background(), send.ModelRun{Model: b.Model, Builder: b, Pool: inference.NewPool([]launcher.Endpoint{ep}, 2),
		Items: tasks.ItemList(items), Repeats: 1})
	if err != nil || s.Answered != len(items) {
		st, _ := journal.Read(run)
		t.Fatalf("run: %+v, %v; want every item answered; journal: %+v", s, err, st.Records)
	}
}

// startEngine runs the simulated engine in this process until the test
// ends, and waits (at most 30 s) until it answers /health.
func startEngine(t *testing.T, model string, args ...string) launcher.Endpoint {
	t.Helper()
	port := proctest.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- simengine.Main(ctx, append([]string{"serve", model, "--served-model-name", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--sim-workers", "0", "--disable-uvicorn-access-log"}, args...), io.Discard, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("engine exited during start-up: %v", err)
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the simulated engine's /health")
		}
	}
	return launcher.Endpoint{Model: model, BaseURL: base + "/v1", MaxNumSeqs: 4}
}
