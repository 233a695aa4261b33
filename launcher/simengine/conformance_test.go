package simengine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
)

// wire is testdata/conformance/vllm-wire.json: what vLLM's source says
// its server sends. The simulated engine is checked against it, not
// against its own code.
type wire struct {
	Stream struct {
		Done  string `json:"done"`
		Chunk struct {
			Object   string   `json:"object"`
			Required []string `json:"required"`
			Optional []string `json:"optional"`
		} `json:"chunk"`
		Choice struct {
			Required      []string `json:"required"`
			Optional      []string `json:"optional"`
			FinishReasons []string `json:"finish_reasons"`
		} `json:"choice"`
		Delta struct {
			Optional   []string          `json:"optional"`
			FirstChunk map[string]string `json:"first_chunk"`
		} `json:"delta"`
		UsageChunk struct {
			UsageRequired       []string `json:"usage_required"`
			UsageOptional       []string `json:"usage_optional"`
			PromptTokensDetails []string `json:"prompt_tokens_details"`
		} `json:"usage_chunk"`
		Error struct {
			KeyOrder []string `json:"key_order"`
			Then     string   `json:"then"`
		} `json:"error"`
	} `json:"stream"`
	Completion struct {
		Object          string   `json:"object"`
		Required        []string `json:"required"`
		MessageOptional []string `json:"message_optional"`
	} `json:"completion"`
	HTTPError struct {
		KeyOrder     []string          `json:"key_order"`
		Types        map[string]string `json:"types"`
		ModelMissing struct {
			Status int    `json:"status"`
			Type   string `json:"type"`
			Param  string `json:"param"`
		} `json:"model_not_found"`
		ContextLength struct {
			Param   string `json:"param"`
			Message string `json:"message"`
		} `json:"context_length"`
	} `json:"http_error"`
	Unauthorized struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	} `json:"unauthorized"`
	Metrics struct {
		Labels     []string `json:"labels"`
		Gauges     []string `json:"gauges"`
		Counters   []string `json:"counters"`
		Histograms []string `json:"histograms"`
	} `json:"metrics"`
}

func loadWire(t *testing.T) wire {
	t.Helper()
	b, err := os.ReadFile("../../testdata/conformance/vllm-wire.json")
	if err != nil {
		t.Fatal(err)
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// keys returns the keys of a JSON object in the order they are written.
func keys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var out []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// within checks that got holds every required key and no key outside
// required and optional.
func within(got, required, optional []string) error {
	for _, k := range required {
		if !slices.Contains(got, k) {
			return fmt.Errorf("lacks %q", k)
		}
	}
	for _, k := range got {
		if !slices.Contains(required, k) && !slices.Contains(optional, k) {
			return fmt.Errorf("has %q, which vLLM does not send", k)
		}
	}
	return nil
}

func field(t *testing.T, raw []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return m[name]
}

// streamEvents posts a streaming chat with include_usage and returns its
// data lines.
func streamEvents(t *testing.T, p *engineProc, text string) []string {
	t.Helper()
	b, _ := json.Marshal(textMessage(text, map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}))
	resp, err := http.Post(p.base+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream answered %d %s", resp.StatusCode, ct)
	}
	return sseEvents(t, resp.Body)
}

// TestStreamMatchesVLLMShapes: the chunks, the reasoning delta, the usage
// chunk (cached tokens only with --enable-prompt-tokens-details and only
// when some were cached) and [DONE] have vLLM's keys and values.
func TestStreamMatchesVLLMShapes(t *testing.T) {
	t.Parallel()
	w := loadWire(t)
	for _, flag := range []bool{true, false} {
		args := []string{"--sim-key", faultKey(t), "--sim-reasoning", "--reasoning-parser", "qwen3"}
		if flag {
			args = append(args, "--enable-prompt-tokens-details")
		}
		p := start(t, args...)
		long := strings.Repeat("the same question, asked twice ", 20)
		for round := range 2 {
			evs := streamEvents(t, p, long)
			if len(evs) < 4 || evs[len(evs)-1] != w.Stream.Done {
				t.Fatalf("stream %v does not end in %s", evs, w.Stream.Done)
			}
			var usage json.RawMessage
			reasoning := false
			for i, ev := range evs[:len(evs)-1] {
				raw := []byte(ev)
				if err := within(keys(t, raw), w.Stream.Chunk.Required, w.Stream.Chunk.Optional); err != nil {
					t.Errorf("chunk %d %s: %v", i, ev, err)
				}
				var obj string
				_ = json.Unmarshal(field(t, raw, "object"), &obj)
				if obj != w.Stream.Chunk.Object {
					t.Errorf("chunk %d object %q, want %q", i, obj, w.Stream.Chunk.Object)
				}
				var choices []json.RawMessage
				_ = json.Unmarshal(field(t, raw, "choices"), &choices)
				if u := field(t, raw, "usage"); u != nil {
					usage = u
					if len(choices) != 0 {
						t.Errorf("usage chunk %s has choices", ev)
					}
					continue
				}
				for _, ch := range choices {
					if err := within(keys(t, ch), w.Stream.Choice.Required, w.Stream.Choice.Optional); err != nil {
						t.Errorf("chunk %d choice %s: %v", i, ch, err)
					}
					var fr *string
					_ = json.Unmarshal(field(t, ch, "finish_reason"), &fr)
					if fr != nil && !slices.Contains(w.Stream.Choice.FinishReasons, *fr) {
						t.Errorf("finish_reason %q is not vLLM's", *fr)
					}
					d := field(t, ch, "delta")
					if err := within(keys(t, d), nil, w.Stream.Delta.Optional); err != nil {
						t.Errorf("chunk %d delta %s: %v", i, d, err)
					}
					var dm map[string]string
					_ = json.Unmarshal(d, &dm)
					if i == 0 && !mapsEqual(dm, w.Stream.Delta.FirstChunk) {
						t.Errorf("first delta %s, want %v", d, w.Stream.Delta.FirstChunk)
					}
					reasoning = reasoning || dm["reasoning"] != ""
				}
			}
			if !reasoning {
				t.Errorf("with --reasoning-parser the thinking must come as delta.reasoning: %v", evs)
			}
			if usage == nil {
				t.Fatalf("no usage chunk: %v", evs)
			}
			if err := within(keys(t, usage), w.Stream.UsageChunk.UsageRequired, w.Stream.UsageChunk.UsageOptional); err != nil {
				t.Errorf("usage %s: %v", usage, err)
			}
			details := field(t, usage, "prompt_tokens_details")
			// The first round has nothing cached; the second reuses it.
			if wantDetails := flag && round == 1; (details != nil) != wantDetails {
				t.Errorf("flag %v round %d: usage %s; details wanted: %v", flag, round, usage, wantDetails)
			} else if details != nil {
				if err := within(keys(t, details), w.Stream.UsageChunk.PromptTokensDetails, nil); err != nil {
					t.Errorf("prompt_tokens_details %s: %v", details, err)
				}
			}
		}
	}
}

// TestErrorsMatchVLLMShapes: the error inside a stream, HTTP error bodies
// and the 401 have vLLM's shape.
func TestErrorsMatchVLLMShapes(t *testing.T) {
	t.Parallel()
	w := loadWire(t)
	p := start(t, "--sim-key", faultKey(t), "--sim-fault", "stream-error-after=0", "--max-model-len", "64", "--api-key", "k")
	// Stream error: {"error": {...}} with vLLM's keys in order, then [DONE].
	b, _ := json.Marshal(textMessage("q", map[string]any{"stream": true}))
	req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	evs := sseEvents(t, resp.Body)
	resp.Body.Close()
	errAt := slices.IndexFunc(evs, func(s string) bool { return strings.HasPrefix(s, `{"error"`) })
	if errAt < 0 || errAt+1 >= len(evs) || evs[errAt+1] != w.Stream.Error.Then {
		t.Fatalf("stream %v: want an error line then %s", evs, w.Stream.Error.Then)
	}
	checkErrorObject(t, []byte(evs[errAt]), w.Stream.Error.KeyOrder, 500)

	// HTTP errors.
	for _, c := range []struct {
		body   map[string]any
		status int
		param  *string
	}{
		{map[string]any{"model": "nope", "messages": []any{map[string]any{"role": "user", "content": "q"}}}, w.HTTPError.ModelMissing.Status, &w.HTTPError.ModelMissing.Param},
		{textMessage(strings.Repeat("long ", 400), nil), http.StatusBadRequest, &w.HTTPError.ContextLength.Param},
	} {
		status, body := p.do(http.MethodPost, "/v1/chat/completions", "k", c.body)
		if status != c.status {
			t.Errorf("status %d, want %d: %s", status, c.status, body)
			continue
		}
		info := checkErrorObject(t, body, w.HTTPError.KeyOrder, status)
		if want := w.HTTPError.Types[fmt.Sprint(status)]; info.Type != want {
			t.Errorf("type %q, want %q", info.Type, want)
		}
		if info.Param == nil || *info.Param != *c.param {
			t.Errorf("param %v, want %q", info.Param, *c.param)
		}
	}
	status, body := p.do(http.MethodGet, "/v1/models", "", nil)
	var want bytes.Buffer
	_ = json.Compact(&want, w.Unauthorized.Body) // Starlette's JSONResponse writes compact JSON
	if status != w.Unauthorized.Status || !bytes.Equal(body, want.Bytes()) {
		t.Errorf("without the key: %d %s, want %d %s", status, body, w.Unauthorized.Status, w.Unauthorized.Body)
	}
}

type errorInfo struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

// checkErrorObject checks {"error": {message, type, param, code}} with
// the keys in order and code equal to status, and returns the inner object.
func checkErrorObject(t *testing.T, raw []byte, order []string, status int) errorInfo {
	t.Helper()
	if got := keys(t, raw); !slices.Equal(got, []string{"error"}) {
		t.Errorf("%s: top-level keys %v, want only error", raw, got)
	}
	inner := field(t, raw, "error")
	if got := keys(t, inner); !slices.Equal(got, order) {
		t.Errorf("%s: keys %v, want %v", raw, got, order)
	}
	var info errorInfo
	if err := json.Unmarshal(inner, &info); err != nil || info.Message == "" || info.Type == "" || info.Code != status {
		t.Errorf("%s: %+v (%v), want a message, a type and code %d", raw, info, err, status)
	}
	return info
}

// TestMetricNamesAreVLLMs: every series the simulated engine exposes has
// a vLLM name and vLLM's labels, and the ones npcorch reads are there.
func TestMetricNamesAreVLLMs(t *testing.T) {
	t.Parallel()
	w := loadWire(t)
	p := start(t)
	p.chat(textMessage("q", nil))
	fams := scrapeFamilies(t, p)
	known := slices.Concat(w.Metrics.Gauges, w.Metrics.Counters, w.Metrics.Histograms)
	for name, fam := range fams {
		if !strings.HasPrefix(name, "vllm:") {
			continue // the Go client's own process metrics
		}
		if !slices.Contains(known, name) {
			t.Errorf("the simulated engine exposes %s, which vLLM does not", name)
		}
		for _, m := range fam.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			for _, want := range w.Metrics.Labels {
				if !slices.Contains(labels, want) {
					t.Errorf("%s lacks vLLM's label %s: %v", name, want, labels)
				}
			}
		}
	}
	for _, read := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:num_preemptions_total", "vllm:generation_tokens_total"} {
		if fams[read] == nil {
			t.Errorf("/metrics lacks %s, which npcorch reads", read)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
