package send_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// fakeEngine answers like an OpenAI-compatible engine: it records every
// request's text and decoded image bytes, fails the first failN requests
// with 503, and answers by rule.
type fakeEngine struct {
	mu      sync.Mutex
	failN   int
	prompts []string
	images  [][]byte
	answer  func(text string) string
}

func (f *fakeEngine) handler(w http.ResponseWriter, r *http.Request) {
	var req sentChat
	json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	if f.failN > 0 {
		f.failN--
		f.mu.Unlock()
		w.WriteHeader(503)
		w.Write([]byte(`{"object":"error","message":"overloaded","type":"ServiceUnavailable","code":503}`))
		return
	}
	var text string
	for _, p := range req.Messages[0].Content {
		if p.Type == "text" {
			text = p.Text
		} else {
			data, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(p.ImageURL.URL, "data:image/png;base64,"))
			f.images = append(f.images, data)
		}
	}
	f.prompts = append(f.prompts, text)
	f.mu.Unlock()
	sse(w, chunk(f.answer(text), "stop"))
	sse(w, `{"id":"c","object":"chat.completion.chunk","model":"M","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	sse(w, "[DONE]")
}

func writeImage(t *testing.T, root, name string, data []byte) dataset.Image {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return dataset.Image{Path: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
}

func testRunner(t *testing.T, run string) *send.Runner {
	t.Helper()
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	r := &send.Runner{Client: inference.NewClient(testSettings()), Journal: j, Prompts: prompts, Retries: 3, Backoff: time.Millisecond,
		Tasks: benchmark()}
	st2, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	r.SetState(st2)
	return r
}

func TestRunnerL6InjectionRetriesAndResume(t *testing.T) {
	root := t.TempDir()
	overview := writeImage(t, root, "overview.png", []byte("\x89PNG fake overview bytes"))
	page := writeImage(t, root, "page.png", []byte("\x89PNG fake page bytes"))
	q := dataset.CareQuestion{ID: "q1", Checkpoint: "after induction", Question: "Next step?", Answer: "B",
		Options: []dataset.Option{{Letter: "A", Text: "surveillance"}, {Letter: "B", Text: "concurrent chemoradiotherapy"}},
		Inject:  []string{dataset.InjectPathology, dataset.InjectTStage}, Supplied: []dataset.Supplied{{Field: "N stage", Value: "N2"}}}
	items := []tasks.Item{
		{ID: "cp_care/C01/q1", Task: npcbench.CPCare, Patient: "C01", Gold: tasks.Gold{Label: "B"}, Care: &q,
			Context: []dataset.ContextEntry{{When: "Day 0", Text: "biopsy"}}},
		{ID: "cp_pathology/C01", Task: npcbench.CPPathology, Patient: "C01", Images: []dataset.Image{overview}, Gold: tasks.Gold{Label: "1"}},
		{ID: "cp_mri/C01", Task: npcbench.CPMRI, Patient: "C01", Images: []dataset.Image{page}, Gold: tasks.Gold{Label: "T3"}},
	}
	eng := &fakeEngine{failN: 2, answer: careEpisodeAnswer}
	ep := serve(t, eng.handler)
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	model.Name = "M"
	run := t.TempDir()
	r := testRunner(t, run)
	mr := send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 2), Items: tasks.ItemList(items), Repeats: 1}
	s, err := r.Run(context.Background(), mr)
	if err != nil {
		t.Fatal(err)
	}
	if s.Answered != 3 || s.NotRun != 0 || s.Failures[inference.FailServer] != 2 {
		t.Fatalf("summary = %+v, want 3 answered after 2 retried 503s", s)
	}
	// The care question was asked last, with the model's own findings.
	last := eng.prompts[len(eng.prompts)-1]
	for _, want := range []string{"Pathology (model prediction): 1", "MRI T stage (model prediction): T4", "N stage: N2", "[Day 0] biopsy", "Output only one option letter from A, B."} {
		if !strings.Contains(last, want) {
			t.Errorf("care prompt lacks %q:\n%s", want, last)
		}
	}
	// Images arrived as the files' own bytes.
	if len(eng.images) != 2 || string(eng.images[0]) != "\x89PNG fake overview bytes" && string(eng.images[1]) != "\x89PNG fake overview bytes" {
		t.Errorf("images received: %q", eng.images)
	}
	// Resume: a second run over the same journal sends nothing.
	r.Journal.Close()
	r2 := testRunner(t, run)
	before := len(eng.prompts)
	s2, err := r2.Run(context.Background(), mr)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Skipped != 3 || len(eng.prompts) != before {
		t.Fatalf("resume sent %d requests, summary %+v; want nothing sent", len(eng.prompts)-before, s2)
	}
	st, _ := journal.Read(run)
	if len(st.Records) != 3 || st.Duplicates != 0 {
		t.Fatalf("journal has %d records, %d duplicates", len(st.Records), st.Duplicates)
	}
}

// TestRunnerWritesSuppliedFindingsWithoutInjection: a care question that
// injects none of the model's findings still has its supplied reference
// fields under "Prior diagnostic findings", in the journal too, and is
// sent in the first phase (it needs no answer).
func TestRunnerWritesSuppliedFindingsWithoutInjection(t *testing.T) {
	q := dataset.CareQuestion{ID: "q3", Checkpoint: "recurrence", Question: "Next step?", Answer: "A",
		Options:  []dataset.Option{{Letter: "A", Text: "salvage surgery"}, {Letter: "B", Text: "observation"}},
		Supplied: []dataset.Supplied{{Field: "Recurrent stage", Value: "rT4N0M0"}}}
	items := []tasks.Item{{ID: "cp_care/C04/q3", Task: npcbench.CPCare, Patient: "C04", Gold: tasks.Gold{Label: "A"}, Care: &q}}
	eng := &fakeEngine{answer: func(string) string { return "A" }}
	ep := serve(t, eng.handler)
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	run := t.TempDir()
	r := testRunner(t, run)
	mr := send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: t.TempDir()},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items), Repeats: 1}
	if s, err := r.Run(context.Background(), mr); err != nil || s.Answered != 1 {
		t.Fatalf("summary %+v, %v; want the question answered", s, err)
	}
	if len(eng.prompts) != 1 || !strings.Contains(eng.prompts[0], "Prior diagnostic findings\n- Recurrent stage: rT4N0M0") {
		t.Errorf("the prompt lacks the supplied finding:\n%s", eng.prompts)
	}
	st, _ := journal.Read(run)
	for _, rec := range st.Records {
		if !slices.Equal(rec.Prior, []string{"Recurrent stage: rT4N0M0"}) {
			t.Errorf("journaled prior %q, want the supplied finding", rec.Prior)
		}
	}
}

func TestRunnerMarksNotRunAfterRetriesAndNeverStoresAPrediction(t *testing.T) {
	root := t.TempDir()
	img := writeImage(t, root, "o.png", []byte("png"))
	eng := &fakeEngine{failN: 100, answer: func(string) string { return "1" }}
	ep := serve(t, eng.handler)
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	run := t.TempDir()
	r := testRunner(t, run)
	items := []tasks.Item{{ID: "pathology/P01", Task: npcbench.Pathology, Patient: "P01", Images: []dataset.Image{img}, Gold: tasks.Gold{Label: "1"}}}
	s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items)})
	if err != nil {
		t.Fatal(err)
	}
	if s.NotRun != 1 || s.Answered != 0 {
		t.Fatalf("summary %+v", s)
	}
	st, _ := journal.Read(run)
	for _, rec := range st.Records {
		if rec.Status != journal.StatusNotRun || rec.Answer != nil || rec.Attempts != 4 || len(rec.Failures) != 4 {
			t.Fatalf("record %+v: want not_run with no answer after 4 attempts", rec)
		}
	}
}

// TestRunnerEndsRequestsNotRunWhenThePoolCloses: a model whose engines
// are gone for good has its pool closed; every request that was waiting
// for a replica, and every later one, is journaled not run with the
// reason, counted by reason, and the run returns (issue 12: it waited in
// Pool.Acquire for ever).
func TestRunnerEndsRequestsNotRunWhenThePoolCloses(t *testing.T) {
	root := t.TempDir()
	img := writeImage(t, root, "o.png", []byte("png"))
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	run := t.TempDir()
	r := testRunner(t, run)
	var items []tasks.Item
	for _, p := range []string{"P01", "P02", "P03"} {
		items = append(items, tasks.Item{ID: "pathology/" + p, Task: npcbench.Pathology, Patient: p, Images: []dataset.Image{img}, Gold: tasks.Gold{Label: "1"}})
	}
	pool := inference.NewPool(nil, 1) // no replica yet: every request waits
	time.AfterFunc(50*time.Millisecond, func() { pool.Close("its engine gave up after 5 restarts") })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := r.Run(ctx, send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: pool, Items: tasks.ItemList(items)})
	if err != nil {
		t.Fatal(err)
	}
	const why = "no replica will serve this model: its engine gave up after 5 restarts"
	if s.NotRun != 3 || s.Answered != 0 || s.Reasons[why] != 3 || s.Failures[send.FailNoReplica] != 3 {
		t.Fatalf("summary %+v; want 3 not run for %q", s, why)
	}
	st, _ := journal.Read(run)
	if len(st.Records) != 3 {
		t.Fatalf("%d records journaled, want 3", len(st.Records))
	}
	for _, rec := range st.Records {
		if rec.Status != journal.StatusNotRun || rec.Answer != nil || len(rec.Failures) != 1 || rec.Failures[0] != why {
			t.Errorf("record %+v; want not run with the reason", rec)
		}
	}
}

func TestNotRunReasonGroupsAcrossReplicaPorts(t *testing.T) {
	a := journal.NotRunReason(journal.Record{Failures: []string{"x", `connect: Post "http://127.0.0.1:20001/v1/chat/completions": dial tcp 127.0.0.1:20001: connect: connection refused`}})
	b := journal.NotRunReason(journal.Record{Failures: []string{`connect: Post "http://127.0.0.1:20007/v1/chat/completions": dial tcp 127.0.0.1:20007: connect: connection refused`}})
	if a != b || !strings.Contains(a, "HOST:PORT") {
		t.Errorf("reasons %q and %q should group as one", a, b)
	}
	if journal.NotRunReason(journal.Record{}) != "no attempt was made" {
		t.Error("a record without failures needs a reason too")
	}
}

func TestRequestRefusesImagesChangedAfterPrepAndPathEscapes(t *testing.T) {
	root := t.TempDir()
	img := writeImage(t, root, "a.png", []byte("original"))
	os.WriteFile(filepath.Join(root, "a.png"), []byte("modified"), 0o644)
	prompts, _ := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	b := tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}
	it := tasks.Item{ID: "pathology/P01", Task: npcbench.Pathology, Images: []dataset.Image{img}}
	// Base64 images are checked as they are streamed: the request fails,
	// is not retried, and the engine never receives a whole body.
	req, err := b.Build(prompts, it, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var whole bool
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err == nil {
			whole = true
		}
		w.WriteHeader(400)
	})
	_, err = inference.NewClient(testSettings()).Send(context.Background(), ep, req.Body, req.Inline)
	var f *inference.AttemptFailure
	if !errors.As(err, &f) || f.Kind != inference.FailRejected || !strings.Contains(err.Error(), "does not match the sha256") || whole {
		t.Errorf("changed image: err = %v, engine received a whole body: %v", err, whole)
	}
	b.Media = configs.MediaFile
	if _, err := b.Build(prompts, tasks.Item{ID: "pathology/P01", Task: npcbench.Pathology,
		Images: []dataset.Image{{Path: "a.png", Bytes: 9}}}, 0, nil); err == nil || !strings.Contains(err.Error(), "changed after `npcorch prep`") {
		t.Errorf("image of another size: err = %v", err)
	}
	b.Media = configs.MediaBase64
	for _, bad := range []string{"../outside.png", "/etc/passwd", "a/../../x.png"} {
		it.Images = []dataset.Image{{Path: bad}}
		if _, err := b.Build(prompts, it, 0, nil); err == nil || !strings.Contains(err.Error(), "prepared folder") {
			t.Errorf("path %q: err = %v", bad, err)
		}
	}
	b.Media = configs.MediaFile
	it.Images = []dataset.Image{{Path: "a.png", Bytes: 8}}
	req, err = b.Build(prompts, it, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := req.Body.Messages[0].MultiContent[1].ImageURL.URL
	if url != "file://"+filepath.Join(root, "a.png") {
		t.Errorf("file URL = %s", url)
	}
}

// careEpisodeAnswer answers a CarePath episode's prompts: malignant
// pathology, T4 from the MRI pages, option B to every care question.
func careEpisodeAnswer(text string) string {
	switch {
	case strings.Contains(text, "pathology image"):
		return "1"
	case strings.Contains(text, "MRI panels"):
		return `{"structure_invasion":{},"involved_structures":[],"T_stage":"T4","evidence":"x"}`
	default:
		return "B"
	}
}

// TestNotRunReasonGroupsAcrossImagePaths: an engine that refuses every
// image names each one; the summary groups them as one reason (a new-user
// trial saw eight lines for eight slides), and a URL's path stays.
func TestNotRunReasonGroupsAcrossImagePaths(t *testing.T) {
	reason := func(p string) string {
		return journal.NotRunReason(journal.Record{Failures: []string{"rejected (HTTP 400): The file path /data/prep/" + p +
			"/overview.png must be a subpath of `--allowed-local-media-path` /srv/media."}})
	}
	a, b := reason("P01"), reason("P02")
	if a != b || a != "rejected (HTTP 400): The file path PATH must be a subpath of `--allowed-local-media-path` PATH" {
		t.Errorf("reasons %q and %q, want one with the paths blanked", a, b)
	}
	url := journal.NotRunReason(journal.Record{Failures: []string{`connect: Post "http://127.0.0.1:20001/v1/chat/completions": EOF`}})
	if url != `connect: Post "http://HOST:PORT/v1/chat/completions": EOF` {
		t.Errorf("reason %q: the URL's path must stay", url)
	}
}
