package send_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// These tests run the client, pool, runner and journal against simulated
// engines started as real child processes (see main_test.go), with the
// faults of launcher/simengine injected.

// textKey answers any text-only request containing marker with answer.
func textKey(t *testing.T, marker, answer string) []string {
	t.Helper()
	return writeKey(t, t.TempDir(), &simkey.Key{Format: simkey.Format,
		Items: []simkey.Item{{ID: "text", Contains: marker, Right: answer, Constant: answer}}})
}

// textBody is a streaming request with one text message.
func textBody(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: simModel, MaxTokens: 512, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages:      []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}}
}

// failureKind sends body to ep and returns the kind of the failure, failing
// the test when the request succeeds.
func failureKind(t *testing.T, s configs.ClientSettings, ep launcher.Endpoint, body openai.ChatCompletionRequest) *inference.AttemptFailure {
	t.Helper()
	c := inference.NewClient(s)
	defer c.Close()
	ans, err := c.Stream(context.Background(), ep, body)
	var f *inference.AttemptFailure
	if !errors.As(err, &f) {
		t.Fatalf("request succeeded (%+v) or failed without a *AttemptFailure (%v)", ans, err)
	}
	return f
}

func TestEngineConnectFailures(t *testing.T) {
	t.Parallel()
	t.Run("nobody listens", func(t *testing.T) {
		ep := launcher.Endpoint{Model: "gone", BaseURL: fmt.Sprintf("http://127.0.0.1:%d/v1", proctest.FreePort(t))}
		f := failureKind(t, engineSettings(), ep, textBody("hello"))
		if f.Kind != inference.FailConnect || !f.Retryable() {
			t.Fatalf("failure %v: want a retryable %s", f, inference.FailConnect)
		}
	})
	t.Run("engine still loading", func(t *testing.T) {
		e := spawnEngine(t, "--sim-load-time", "10m")
		// The port is bound from here on, but refuses connections until
		// the model has loaded, as vLLM's does.
		eventually(t, "the engine starts loading", func() bool { return strings.Contains(e.out.String(), "Starting to load model") })
		f := failureKind(t, engineSettings(), e.endpoint("loading", 4), textBody("hello"))
		if f.Kind != inference.FailConnect || !f.Retryable() {
			t.Fatalf("failure %v: want a retryable %s", f, inference.FailConnect)
		}
	})
}

func TestEngineFirstTokenTimeout(t *testing.T) {
	t.Parallel()
	s := engineSettings()
	s.FirstTokenTimeout, s.ChunkTimeout = 300*time.Millisecond, 100*time.Millisecond
	t.Run("slow prefill", func(t *testing.T) {
		// 100 prompt tokens at 1 token/s: nothing comes back for 100 s.
		e := startEngine(t, "--sim-prefill-tps", "1")
		f := failureKind(t, s, e.endpoint("slow", 4), textBody(strings.Repeat("word ", 80)))
		if f.Kind != inference.FailFirstToken || !f.Retryable() {
			t.Fatalf("failure %v: want a retryable %s", f, inference.FailFirstToken)
		}
	})
	t.Run("hang before the first token", func(t *testing.T) {
		// The answer is one chunk: the engine sends the role chunk, then
		// hangs. A role chunk is not a token, so the first-token deadline
		// (not the shorter between-chunk one) decides.
		e := startEngine(t, append(textKey(t, "marker", "\\boxed{A}"), "--sim-fault", "hang-after=0", "--sim-chunk-tokens", "1000")...)
		f := failureKind(t, s, e.endpoint("hang", 4), textBody("marker"))
		if f.Kind != inference.FailFirstToken {
			t.Fatalf("failure %v: want %s", f, inference.FailFirstToken)
		}
	})
}

func TestEngineChunkTimeout(t *testing.T) {
	t.Parallel()
	answer := strings.Repeat("The answer is taking shape. ", 4) + "\\boxed{A}"
	e := startEngine(t, append(textKey(t, "marker", answer), "--sim-fault", "hang-after=0", "--sim-chunk-tokens", "1")...)
	s := engineSettings()
	s.ChunkTimeout = 300 * time.Millisecond
	f := failureKind(t, s, e.endpoint("hang", 4), textBody("marker"))
	if f.Kind != inference.FailChunk || !f.Retryable() {
		t.Fatalf("failure %v: want a retryable %s", f, inference.FailChunk)
	}
}

func TestEngineTotalTimeout(t *testing.T) {
	t.Parallel()
	// 60 tokens at 20 tokens/s, one per chunk: chunks keep coming every
	// 50 ms, but the whole answer takes 3 s.
	answer := strings.Repeat("abcd", 59) + "\\bo}"
	e := startEngine(t, append(textKey(t, "marker", answer), "--sim-decode-tps", "20", "--sim-chunk-tokens", "1")...)
	s := engineSettings()
	s.TotalTimeout = 600 * time.Millisecond
	f := failureKind(t, s, e.endpoint("slow", 4), textBody("marker"))
	if f.Kind != inference.FailTotal || !f.Retryable() {
		t.Fatalf("failure %v: want a retryable %s", f, inference.FailTotal)
	}
}

// runItems runs items for simModel through one endpoint with one worker, so
// requests go out in item order.
func runItems(t *testing.T, r *send.Runner, ep launcher.Endpoint, root string, items []tasks.Item) send.Summary {
	t.Helper()
	m := simModelConfig(t)
	s, err := r.Run(context.Background(), send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEngineStreamErrorsAnd503AreRetriedThenNotRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ fault, kind string }{
		{"stream-error-after=1", inference.FailStream},
		{"503-after=1", inference.FailServer},
	} {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			items := pathologyItems(t, root, 3, true)
			m := simModelConfig(t)
			key := writeSimKey(t, t.TempDir(), tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}, items)
			e := startEngine(t, append(key, "--allowed-local-media-path", root, "--sim-fault", c.fault)...)
			rec := newRecorder(t, e.base)
			run := t.TempDir()
			r := newEngineRunner(t, run, engineSettings()) // 2 retries
			s := runItems(t, r, rec.endpoint("faulty", 1), root, items)

			// The first request completes; then every attempt fails.
			if s.Answered != 1 || s.NotRun != 2 || s.Failures[c.kind] != 6 {
				t.Fatalf("summary %+v: want 1 answered, 2 not run after 3 %s attempts each", s, c.kind)
			}
			if n := len(rec.requests()); n != 1+2*3 {
				t.Errorf("engine received %d requests, want 7 (1 + 2 items × 3 attempts)", n)
			}
			st, err := journal.Read(run)
			if err != nil {
				t.Fatal(err)
			}
			for _, recd := range st.Sorted() {
				if recd.Item == items[0].ID {
					if recd.Status != journal.StatusAnswered || recd.Answer.Content != items[0].Gold.Label {
						t.Errorf("first item: %+v", recd)
					}
					continue
				}
				if recd.Status != journal.StatusNotRun || recd.Answer != nil || recd.Attempts != 3 || len(recd.Failures) != 3 {
					t.Errorf("record %+v: want not_run, no answer, 3 failed attempts", recd)
				}
				for _, msg := range recd.Failures {
					if !strings.HasPrefix(msg, c.kind) {
						t.Errorf("failure %q is not a %s", msg, c.kind)
					}
				}
			}
		})
	}
}

func TestEngineTooManyImagesIsRejectedWithoutRetry(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	two := tasks.Item{ID: "pathology/TWO", Task: npcbench.Pathology, Patient: "TWO", Gold: tasks.Gold{Label: "1"},
		Images: []dataset.Image{imageFile(t, root, 1, true), imageFile(t, root, 2, true)}}
	three := tasks.Item{ID: "pathology/THREE", Task: npcbench.Pathology, Patient: "THREE", Gold: tasks.Gold{Label: "1"},
		Images: []dataset.Image{imageFile(t, root, 3, true), imageFile(t, root, 4, true), imageFile(t, root, 5, true)}}
	e := startEngine(t, "--allowed-local-media-path", root, "--limit-mm-per-prompt", `{"image":2}`)
	rec := newRecorder(t, e.base)
	run := t.TempDir()
	s := runItems(t, newEngineRunner(t, run, engineSettings()), rec.endpoint("small", 1), root, []tasks.Item{two, three})
	if s.Answered != 1 || s.NotRun != 1 || s.Failures[inference.FailRejected] != 1 || len(s.Failures) != 1 {
		t.Fatalf("summary %+v: want the 2-image item answered and the 3-image one rejected once", s)
	}
	if n := len(rec.requests()); n != 2 {
		t.Errorf("engine received %d requests, want 2: a rejected request is never retried", n)
	}
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, recd := range st.Records {
		if recd.Item != three.ID {
			continue
		}
		if recd.Status != journal.StatusNotRun || recd.Answer != nil || recd.Attempts != 1 {
			t.Fatalf("record %+v: want not_run after 1 attempt, with no answer", recd)
		}
		if msg := recd.Failures[0]; !strings.Contains(msg, "HTTP 400") || !strings.Contains(msg, "At most 2 image(s)") {
			t.Errorf("failure %q should carry vLLM's 400 message", msg)
		}
	}
}

func TestEngineReasoningIsStripped(t *testing.T) {
	t.Parallel()
	const answer = "\\boxed{B}"
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"reasoning field", []string{"--sim-reasoning", "--reasoning-parser", "qwen3"}},
		{"think block in content", []string{"--sim-reasoning"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := startEngine(t, append(textKey(t, "marker", answer), c.flags...)...)
			rec := newRecorder(t, e.base)
			client := inference.NewClient(engineSettings())
			defer client.Close()
			ans, err := client.Stream(context.Background(), rec.endpoint("think", 4), textBody("marker"))
			if err != nil {
				t.Fatal(err)
			}
			if ans.Content != answer {
				t.Errorf("content %q, want only the answer %q", ans.Content, answer)
			}
			if !strings.HasPrefix(ans.Reasoning, "Let me look at each image") || strings.Contains(ans.Reasoning, "think>") || strings.Contains(ans.Reasoning, answer) {
				t.Errorf("reasoning %q: want the thinking alone, without tags or answer", ans.Reasoning)
			}
			// Thinking switched off through the chat template.
			body := textBody("marker")
			body.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
			ans, err = client.Stream(context.Background(), rec.endpoint("think", 4), body)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Content != answer || ans.Reasoning != "" {
				t.Errorf("enable_thinking=false: content %q reasoning %q", ans.Content, ans.Reasoning)
			}
		})
	}
}

func TestEngineUsageAndCachedTokens(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	items := pathologyItems(t, root, 1, true)
	m := simModelConfig(t)
	for _, c := range []struct {
		name string
		flag bool // the engine runs with --enable-prompt-tokens-details
	}{{"with the flag", true}, {"without it", false}} {
		t.Run(c.name, func(t *testing.T) {
			b := tasks.RequestBuilder{Model: m, Media: configs.MediaBase64, Root: root}
			key := writeSimKey(t, t.TempDir(), b, items)
			args := append(key, "--sim-image-tokens", "100", "--block-size", "16")
			if c.flag {
				args = append(args, "--enable-prompt-tokens-details")
			}
			e := startEngine(t, args...)
			req, err := b.Build(defaultPrompts(t), items[0], 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			client := inference.NewClient(engineSettings())
			defer client.Close()
			ep := e.endpoint("usage", 4)
			ep.CachedTokens = c.flag
			// The engine counts ceil(text runes / 4) + 100 per image; the
			// answer "0" is one token.
			prompt := (len([]rune(req.Prompt))+3)/4 + 100
			var got []inference.Usage
			for range 2 {
				ans, err := client.Send(context.Background(), ep, req.Body, req.Inline)
				if err != nil {
					t.Fatal(err)
				}
				if ans.Content != "0" || ans.FinishReason != "stop" || ans.Timing.Chunks != 1 || ans.Timing.TTFTms > ans.Timing.E2Ems {
					t.Errorf("answer %+v", ans)
				}
				got = append(got, ans.Usage)
			}
			// The second request hits the prefix cache: whole 16-token
			// blocks of the prompt, never its last token. vLLM leaves the
			// details out when nothing was cached: with the flag that is
			// 0; without it nothing is known.
			cached := (prompt - 1) / 16 * 16
			for i, want := range []int{0, cached} {
				u := got[i]
				if u.PromptTokens != prompt || u.CompletionTokens != 1 {
					t.Errorf("request %d: usage %+v, want prompt %d, completion 1", i, u, prompt)
				}
				w, ok := u.WorkTokens()
				switch {
				case c.flag && (u.CachedTokens == nil || *u.CachedTokens != want || !ok || w != prompt-want+1):
					t.Errorf("request %d: cached %v, work %d (%v); want %d cached, %d work", i, u.CachedTokens, w, ok, want, prompt-want+1)
				case !c.flag && (u.CachedTokens != nil || ok):
					t.Errorf("request %d: cached %v, work ok %v; want both unknown", i, u.CachedTokens, ok)
				}
			}
		})
	}
}

// imageOf maps the file:// URL of each item's only image to the item.
func imageOf(root string, items []tasks.Item) map[string]string {
	m := map[string]string{}
	for _, it := range items {
		m["file://"+filepath.Join(root, it.Images[0].Path)] = it.ID
	}
	return m
}

func TestEngineTornJournalLineIsResent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	items := pathologyItems(t, root, 6, true)
	m := simModelConfig(t)
	key := writeSimKey(t, t.TempDir(), tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}, items)
	e := startEngine(t, append(key, "--allowed-local-media-path", root)...)
	rec := newRecorder(t, e.base)
	run := t.TempDir()
	r := newEngineRunner(t, run, engineSettings())
	if s := runItems(t, r, rec.endpoint("e", 1), root, items); s.Answered != 6 {
		t.Fatalf("first run: %+v", s)
	}
	r.Journal.Close()

	// A crash in the middle of the last write leaves half a line.
	path := filepath.Join(run, "journal", simModel, npcbench.Pathology+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	var lost journal.Record
	if err := json.Unmarshal([]byte(last), &lost); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-1], "")+last[:len(last)/2]), 0o644); err != nil {
		t.Fatal(err)
	}

	before := len(rec.requests())
	r2 := newEngineRunner(t, run, engineSettings())
	s := runItems(t, r2, rec.endpoint("e", 1), root, items)
	if s.Answered != 1 || s.Skipped != 5 {
		t.Fatalf("resume: %+v, want the torn item alone sent again", s)
	}
	resent := rec.requests()[before:]
	if len(resent) != 1 || imageOf(root, items)[resent[0].Images[0]] != lost.Item {
		t.Fatalf("resume sent %+v, want only %s", resent, lost.Item)
	}
	r2.Journal.Close()
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Records) != 6 || st.Torn != 0 || st.Duplicates != 0 {
		t.Fatalf("journal: %d records, %d torn, %d duplicates; want 6, 0, 0", len(st.Records), st.Torn, st.Duplicates)
	}
	if torn, err := os.ReadFile(path + ".torn"); err != nil || !strings.HasPrefix(last, strings.TrimSpace(string(torn))) {
		t.Errorf("the torn bytes should be kept in %s.torn: %q, %v", path, torn, err)
	}
}

func TestEngineResumeAfterSIGKILLOfTheRunner(t *testing.T) {
	t.Parallel()
	const n = 40
	root := t.TempDir()
	items := pathologyItems(t, root, n, true)
	m := simModelConfig(t)
	key := writeSimKey(t, t.TempDir(), tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}, items)
	// About 900 prompt tokens at 9,000 tokens/s: 0.1 s per request.
	e := startEngine(t, append(key, "--allowed-local-media-path", root, "--sim-prefill-tps", "9000")...)
	rec := newRecorder(t, e.base)
	run := t.TempDir()
	spec, _ := json.Marshal(runnerSpec{Run: run, Root: root, BaseURL: rec.URL, Items: n, Workers: 2})
	specPath := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}

	exe, _ := os.Executable()
	child := exec.Command(exe, "runner", specPath)
	child.Env = append(os.Environ(), send.ChildEnv+"=1")
	out := &proctest.Buffer{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	jfile := filepath.Join(run, "journal", simModel, npcbench.Pathology+".jsonl")
	eventually(t, "the runner child has journaled 8 answers", func() bool {
		select {
		case err := <-done:
			t.Fatalf("runner child ended before it was killed (%v):\n%s", err, out)
		default:
		}
		data, _ := os.ReadFile(jfile)
		return strings.Count(string(data), "\n") >= 8
	})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("runner child: %v, want killed", err)
	}
	firstRun := len(rec.requests())
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	journaled := map[string]bool{}
	for _, r := range st.Records {
		if r.Status == journal.StatusAnswered {
			journaled[r.Item] = true
		}
	}
	if len(journaled) < 8 || len(journaled) == n {
		t.Fatalf("%d items journaled when killed; want a run stopped midway", len(journaled))
	}

	r := newEngineRunner(t, run, engineSettings())
	s, err := r.Run(context.Background(), send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{rec.endpoint("e", 2)}, 2), Items: tasks.ItemList(items), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s.Skipped != len(journaled) || s.Answered != n-len(journaled) {
		t.Fatalf("resume %+v: want %d skipped and %d answered", s, len(journaled), n-len(journaled))
	}
	// Nothing already journaled was sent again, and each missing item once.
	byImage := imageOf(root, items)
	sentAgain := map[string]int{}
	for _, req := range rec.requests()[firstRun:] {
		id := byImage[req.Images[0]]
		if journaled[id] {
			t.Errorf("resume re-sent %s, which the journal already answered", id)
		}
		sentAgain[id]++
	}
	for _, it := range items {
		if !journaled[it.ID] && sentAgain[it.ID] != 1 {
			t.Errorf("%s was sent %d times on resume, want once", it.ID, sentAgain[it.ID])
		}
	}
	r.Journal.Close()
	st, err = journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, r := range st.Records {
		if r.Status == journal.StatusAnswered {
			answered++
		}
	}
	if answered != n || st.Duplicates != 0 {
		t.Fatalf("final journal: %d of %d answered, %d duplicates; want each item answered exactly once", answered, n, st.Duplicates)
	}
}

// carePatient is one CarePath patient's L6 items: pathology, MRI staging
// and two care questions that inject the model's findings.
func carePatient(t *testing.T, root string) []tasks.Item {
	t.Helper()
	st := configs.DefaultStructures()
	inv := map[string]int{}
	for _, id := range st.IDs() {
		inv[id] = 0
	}
	q1 := dataset.CareQuestion{ID: "q1", Checkpoint: "initial staging", Question: "Which treatment intent fits?", Answer: "B",
		Options: []dataset.Option{{Letter: "A", Text: "palliative"}, {Letter: "B", Text: "curative"}},
		Inject:  []string{dataset.InjectPathology, dataset.InjectTStage, dataset.InjectStructures}, Supplied: []dataset.Supplied{{Field: "N stage", Value: "N2"}}}
	q2 := dataset.CareQuestion{ID: "q2", Checkpoint: "after biopsy", Question: "Is a biopsy review needed?", Answer: "A",
		Options: []dataset.Option{{Letter: "A", Text: "yes"}, {Letter: "B", Text: "no"}},
		Inject:  []string{dataset.InjectPathology}}
	ctx := []dataset.ContextEntry{{When: "Day 0", Text: "neck mass, 3 cm"}}
	return []tasks.Item{
		{ID: "cp_care/C01/q1", Task: npcbench.CPCare, Patient: "C01", Gold: tasks.Gold{Label: "B"}, Care: &q1, Context: ctx},
		{ID: "cp_care/C01/q2", Task: npcbench.CPCare, Patient: "C01", Gold: tasks.Gold{Label: "A"}, Care: &q2, Context: ctx},
		{ID: "cp_pathology/C01", Task: npcbench.CPPathology, Patient: "C01", Gold: tasks.Gold{Label: "1"},
			Images: []dataset.Image{imageFile(t, root, 100, true)}},
		{ID: "cp_mri/C01", Task: npcbench.CPMRI, Patient: "C01", Gold: tasks.Gold{Label: "T2", StructureInvasion: inv},
			Images: []dataset.Image{imageFile(t, root, 101, true), imageFile(t, root, 102, true)}},
	}
}

// descriptor is an NPCBench task's descriptor.
func descriptor(t testing.TB, key string) *tasks.Task {
	t.Helper()
	task, err := benchmark().Task(key)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestEngineL6CareQuestionsCarryTheModelsOwnFindings(t *testing.T) {
	t.Parallel()
	st := configs.DefaultStructures()
	ids := st.IDs()
	root := t.TempDir()
	items := carePatient(t, root)
	fp := func(it tasks.Item) string {
		var h []string
		for _, img := range it.Images {
			h = append(h, img.SHA256)
		}
		return simkey.Fingerprint(h)
	}
	// Each model's predictions are fixed by its engine's answer key, and
	// differ from the gold labels (pathology 1, T2, nothing invaded).
	type model struct {
		name, pathology, tStage string
		invaded                 []string
		q1Prior, q2Prior        []string
	}
	models := []model{
		{name: "model-a", pathology: "0", tStage: "T4", invaded: []string{ids[0], ids[2]},
			q1Prior: []string{"Pathology (model prediction): 0, does not support nasopharyngeal carcinoma",
				"MRI T stage (model prediction): T4", "Invaded structures (model prediction): " + ids[0] + ", " + ids[2], "N stage: N2"},
			q2Prior: []string{"Pathology (model prediction): 0, does not support nasopharyngeal carcinoma"}},
		{name: "model-b", pathology: "1", tStage: "T1",
			q1Prior: []string{"Pathology (model prediction): 1, supports nasopharyngeal carcinoma",
				"MRI T stage (model prediction): T1", "Invaded structures (model prediction): none", "N stage: N2"},
			q2Prior: []string{"Pathology (model prediction): 1, supports nasopharyngeal carcinoma"}},
	}
	run := t.TempDir()
	r := newEngineRunner(t, run, engineSettings())
	for _, mod := range models {
		inv := map[string]int{}
		for _, id := range mod.invaded {
			inv[id] = 1
		}
		// A care question is answered right only when its prompt holds
		// exactly these findings; any other prompt gets a garbage answer.
		key := &simkey.Key{Format: simkey.Format, Items: []simkey.Item{
			{ID: "cp_pathology/C01", Images: fp(items[2]), Contains: descriptor(t, npcbench.CPPathology).Sim.Marker, Right: mod.pathology},
			{ID: "cp_mri/C01", Images: fp(items[3]), Contains: descriptor(t, npcbench.CPMRI).Sim.Marker,
				Right: descriptor(t, npcbench.CPMRI).Sim.Answers(tasks.Item{Gold: tasks.Gold{Label: mod.tStage, StructureInvasion: inv}}).Right},
			{ID: "cp_care/C01/q1", Contains: "Prior diagnostic findings\n- " + strings.Join(mod.q1Prior, "\n- ") + "\nClinical information", Right: "B"},
			{ID: "cp_care/C01/q2", Contains: "Prior diagnostic findings\n- " + strings.Join(mod.q2Prior, "\n- ") + "\nClinical information", Right: "A"},
		}}
		e := startEngine(t, append(writeKey(t, t.TempDir(), key), "--served-model-name", mod.name, "--allowed-local-media-path", root)...)
		rec := newRecorder(t, e.base)
		cfg := simModelConfig(t)
		cfg.Name = mod.name
		s, err := r.Run(context.Background(), send.ModelRun{Model: cfg, Builder: tasks.RequestBuilder{Model: cfg, Media: configs.MediaFile, Root: root},
			Pool: inference.NewPool([]launcher.Endpoint{rec.endpoint(mod.name+"#0", 2)}, 2), Items: tasks.ItemList(items), Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s.Answered != 4 || len(s.Problems) != 0 {
			t.Fatalf("%s: %+v", mod.name, s)
		}
		// Each care question went out after the findings it needs (q1:
		// pathology and MRI; q2: pathology only, so it may go before the
		// MRI request), with this model's findings in its prompt (below).
		reqs := rec.requests()
		at := map[string]int{}
		for i, req := range reqs {
			switch {
			case len(req.Images) == 1:
				at["pathology"] = i
			case len(req.Images) == 2:
				at["mri"] = i
			case strings.Contains(req.Text, "Which treatment intent fits?"):
				at["q1"] = i
			case strings.Contains(req.Text, "Is a biopsy review needed?"):
				at["q2"] = i
			}
		}
		if len(at) != 4 || at["q1"] < at["pathology"] || at["q1"] < at["mri"] || at["q2"] < at["pathology"] {
			t.Errorf("%s: requests in the order %v (0 first): a care question went before the findings it needs", mod.name, at)
		}
		for _, q := range [][]string{mod.q1Prior, mod.q2Prior} {
			found := false
			for _, req := range reqs {
				found = found || strings.Contains(req.Text, "- "+strings.Join(q, "\n- ")+"\n")
			}
			if !found {
				t.Errorf("%s: no care prompt carried %q", mod.name, q)
			}
		}
	}
	r.Journal.Close()
	j, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range models {
		for _, c := range []struct {
			item, answer string
			prior        []string
		}{{"cp_care/C01/q1", "B", mod.q1Prior}, {"cp_care/C01/q2", "A", mod.q2Prior}} {
			var got *journal.Record
			for _, recd := range j.Records {
				if recd.Model == mod.name && recd.Item == c.item {
					got = &recd
				}
			}
			switch {
			case got == nil:
				t.Errorf("%s %s: not journaled", mod.name, c.item)
			case !slices.Equal(got.Prior, c.prior):
				t.Errorf("%s %s: journal prior %q, want %q", mod.name, c.item, got.Prior, c.prior)
			case got.Answer == nil || got.Answer.Content != c.answer:
				t.Errorf("%s %s: answer %+v; the engine did not find the model's findings in the prompt", mod.name, c.item, got.Answer)
			}
		}
	}
}

// replicaWatch counts journaled records per replica and runs a hook on
// each.
type replicaWatch struct {
	mu     sync.Mutex
	counts map[string]int
	hook   func(journal.Record, map[string]int)
}

func (w *replicaWatch) Start(string, int)           {}
func (w *replicaWatch) Finish(string, send.Summary) {}
func (w *replicaWatch) Record(rec journal.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[rec.Replica]++
	if w.hook != nil {
		w.hook(rec, w.counts)
	}
}

// running reads vllm:num_requests_running from an engine.
func running(e *simEngine) float64 {
	l, err := inference.ScrapeLoad(context.Background(), &http.Client{Timeout: 5 * time.Second}, e.base+"/metrics")
	if err != nil {
		return 0
	}
	return l.Running
}

func TestEngineTwoReplicasShareWorkAndSurviveAKill(t *testing.T) {
	t.Parallel()
	const n = 30
	root := t.TempDir()
	items := pathologyItems(t, root, n, true)
	m := simModelConfig(t)
	key := writeSimKey(t, t.TempDir(), tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}, items)
	// Replica A takes about 1 s per request, B about 0.1 s.
	a := startEngine(t, append(key, "--allowed-local-media-path", root, "--sim-prefill-tps", "900")...)
	b := startEngine(t, append(key, "--allowed-local-media-path", root, "--sim-prefill-tps", "9000")...)
	pool := inference.NewPool([]launcher.Endpoint{a.endpoint("A", 2), b.endpoint("B", 2)}, 2)
	pool.Down = time.Hour // a dead replica stays out for the rest of the run
	killed := make(chan struct{})
	var once sync.Once
	watch := &replicaWatch{counts: map[string]int{}, hook: func(rec journal.Record, counts map[string]int) {
		if counts["A#0"] >= 1 {
			once.Do(func() {
				// Kill A while it holds a request.
				go func() {
					eventually(t, "replica A has a request in flight", func() bool { return running(a) >= 1 })
					a.kill()
					close(killed)
				}()
			})
		}
	}}
	run := t.TempDir()
	r := newEngineRunner(t, run, engineSettings())
	r.Retries = 4
	r.Progress = watch
	s, err := r.Run(context.Background(), send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root},
		Pool: pool, Items: tasks.ItemList(items), Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	default:
		t.Fatal("replica A was never killed: the run ended before it had answered once")
	}
	if s.Answered != n || s.NotRun != 0 {
		t.Fatalf("summary %+v: want all %d answered", s, n)
	}
	if watch.counts["A#0"] == 0 || watch.counts["B#0"] == 0 {
		t.Errorf("records per replica %v: want both replicas used", watch.counts)
	}
	r.Journal.Close()
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, recd := range st.Records {
		if recd.Status != journal.StatusAnswered {
			t.Errorf("record %+v not answered", recd)
		}
		if recd.Replica == "B#0" && len(recd.Failures) > 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no request failed on the killed replica and was answered by the other")
	}
	if len(st.Records) != n || st.Duplicates != 0 {
		t.Errorf("journal: %d records, %d duplicates; want %d and 0", len(st.Records), st.Duplicates, n)
	}
}

func TestEngineAdaptiveConcurrencyFollowsTheQueue(t *testing.T) {
	t.Parallel()
	const n = 16
	root := t.TempDir()
	items := pathologyItems(t, root, n, true)
	m := simModelConfig(t)
	key := writeSimKey(t, t.TempDir(), tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root}, items)
	// The engine runs one request at a time (0.2 s each); the client was
	// told 8, so requests queue in the engine until the pool backs off to
	// what runs and the Headroom.
	e := startEngine(t, append(key, "--allowed-local-media-path", root, "--sim-prefill-tps", "4500", "--max-num-seqs", "1")...)
	pool := inference.NewPool([]launcher.Endpoint{e.endpoint("e", 8)}, 0)
	rep := pool.Members()[0]
	start := pool.Limit(rep)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go pool.WatchMetrics(ctx, &http.Client{Timeout: 5 * time.Second}, 20*time.Millisecond)
	var mu sync.Mutex
	lowest := start
	watch := &replicaWatch{counts: map[string]int{}, hook: func(journal.Record, map[string]int) {
		mu.Lock()
		lowest = min(lowest, pool.Limit(rep))
		mu.Unlock()
	}}
	r := newEngineRunner(t, t.TempDir(), engineSettings())
	r.Progress = watch
	s, err := r.Run(context.Background(), send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: root},
		Pool: pool, Items: tasks.ItemList(items), Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if s.Answered != n {
		t.Fatalf("summary %+v", s)
	}
	if ceiling := float64(8 + inference.Headroom(8)); start != ceiling || lowest > 1+float64(inference.Headroom(8)) {
		t.Errorf("limit started at %v and fell to %v: want a start at the ceiling (%v) and a fall to what runs and the Headroom (%d) while requests waited",
			start, lowest, ceiling, 1+inference.Headroom(8))
	}
}
