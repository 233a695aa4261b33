package simengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// promptTokens is the documented prompt size: ceil(text runes / 4) plus
// the image tokens.
func promptTokens(text string, images, perImage int) int {
	return (utf8.RuneCountInString(text)+3)/4 + images*perImage
}

func TestRefusesWhileLoadingThenReady(t *testing.T) {
	t.Parallel()
	p := spawn(t, "--sim-load-time", "3s")
	p.waitLog("Starting to load model sim-model")
	addr := p.base[len("http://"):]
	logs := p.stdout.String() // read before dialling: no listen line yet means no listener
	conn, err := net.Dial("tcp", addr)
	if strings.Contains(logs, "Starting vLLM API server") {
		t.Fatal("the engine finished loading before the test could dial; the machine is too slow for a 3 s load")
	}
	if err == nil {
		conn.Close()
		t.Fatal("connected while the engine was loading; want connection refused")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while loading: %v, want connection refused", err)
	}

	p.waitHealth(http.StatusOK)
	markers := []string{"Model loading took", "Available KV cache memory", "Maximum concurrency for",
		"Starting vLLM API server 0 on http://" + addr, "Application startup complete"}
	// The engine wrote them all before it answered; the test's pipe
	// readers may not have read them yet.
	for _, marker := range markers {
		p.waitLog(marker)
	}
	logs = p.stdout.String() + p.stderr.String()
	last := -1
	for _, marker := range markers {
		i := strings.Index(logs, marker)
		if i < 0 {
			t.Fatalf("log lacks %q:\n%s", marker, logs)
		}
		if marker != "Application startup complete" && i < last { // stdout lines in order
			t.Errorf("log marker %q out of order", marker)
		}
		last = i
	}
}

func TestHealthModelsVersion(t *testing.T) {
	t.Parallel()
	p := start(t, "--served-model-name", "Lingshu-7B", "--max-model-len", "4096")
	status, body := p.do(http.MethodGet, "/health", "", nil)
	if status != http.StatusOK || len(body) != 0 {
		t.Errorf("/health = %d %q, want 200 with empty body", status, body)
	}
	status, body = p.do(http.MethodGet, "/v1/models", "", nil)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object, OwnedBy, Root string
			MaxModelLen               int `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || status != http.StatusOK {
		t.Fatalf("/v1/models = %d %s (%v)", status, body, err)
	}
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "Lingshu-7B" ||
		list.Data[0].Object != "model" || list.Data[0].Root != "sim-model" || list.Data[0].MaxModelLen != 4096 {
		t.Errorf("/v1/models = %s", body)
	}
	// The request's model must be the served name, as in vLLM.
	status, body = p.do(http.MethodPost, "/v1/chat/completions", "", textMessage("hi", nil))
	if status != http.StatusNotFound || !strings.Contains(string(body), "The model `sim-model` does not exist.") {
		t.Errorf("chat with an unknown model = %d %s, want 404", status, body)
	}
	if status, body = p.do(http.MethodGet, "/nowhere", "", nil); status != http.StatusNotFound || string(body) != `{"detail":"Not Found"}` {
		t.Errorf("unknown path = %d %s", status, body)
	}
	if status, _ = p.do(http.MethodGet, "/v1/chat/completions", "", nil); status != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/chat/completions = %d, want 405", status)
	}
}

func TestStreamThroughGoOpenAI(t *testing.T) {
	t.Parallel()
	const question = "Question 7: is there perineural invasion? Answer in \\boxed{}."
	key := writeKey(t, t.TempDir(), []simkey.Item{
		{ID: "other", Contains: "Question 8", Right: "\\boxed{0}"},
		{ID: "P07/pni", Contains: "Question 7", Right: "\\boxed{1}", Wrong: []string{"\\boxed{0}"}},
	})
	p := start(t, "--sim-key", key, "--api-key", "secret")
	cfg := openai.DefaultConfig("secret")
	cfg.BaseURL = p.base + "/v1"
	client := openai.NewClientWithConfig(cfg)
	stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:         "sim-model",
		Messages:      []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: question}},
		MaxTokens:     64,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var text strings.Builder
	var finish openai.FinishReason
	var usage *openai.Usage
	var roles int
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage != nil {
			if len(resp.Choices) != 0 {
				t.Errorf("usage chunk has %d choices, want none", len(resp.Choices))
			}
			usage = resp.Usage
			continue
		}
		for _, c := range resp.Choices {
			if c.Delta.Role == openai.ChatMessageRoleAssistant {
				roles++
			}
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if text.String() != "\\boxed{1}" || finish != openai.FinishReasonStop || roles != 1 {
		t.Errorf("streamed %q finish %q roles %d, want the right answer, stop, one role chunk", text.String(), finish, roles)
	}
	if usage == nil {
		t.Fatal("no usage chunk")
	}
	if want := promptTokens(question, 0, 0); usage.PromptTokens != want || usage.CompletionTokens != 3 ||
		usage.TotalTokens != want+3 || usage.PromptTokensDetails != nil {
		t.Errorf("usage = %+v, want prompt %d, completion 3 and no prompt_tokens_details (nothing cached)", usage, want)
	}
}

func TestStreamChunkSequence(t *testing.T) {
	t.Parallel()
	answer := "\\boxed{T3}"
	key := writeKey(t, t.TempDir(), []simkey.Item{{ID: "T", Right: answer}})
	p := start(t, "--sim-key", key, "--sim-chunk-tokens", "1")

	read := func(includeUsage bool) (http.Header, []string) {
		extra := map[string]any{"stream": true}
		if includeUsage {
			extra["stream_options"] = map[string]any{"include_usage": true}
		}
		b, _ := json.Marshal(textMessage("stage it", extra))
		resp, err := http.Post(p.base+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return resp.Header, sseEvents(t, resp.Body)
	}

	hdr, events := read(true)
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	// role, 3 content chunks of one token (4 runes), finish, usage, [DONE]
	if len(events) != 7 || events[6] != "[DONE]" {
		t.Fatalf("got %d events, want 7 ending in [DONE]:\n%s", len(events), strings.Join(events, "\n"))
	}
	type choice struct {
		Index        int                `json:"index"`
		Delta        map[string]*string `json:"delta"`
		FinishReason *string            `json:"finish_reason"`
	}
	type chunk struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Model   string          `json:"model"`
		Choices json.RawMessage `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
	}
	var chunks []chunk
	var choices [][]choice
	for _, ev := range events[:6] {
		var c chunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("chunk %q: %v", ev, err)
		}
		var cs []choice
		if err := json.Unmarshal(c.Choices, &cs); err != nil {
			t.Fatalf("choices of %q: %v", ev, err)
		}
		if (len(chunks) > 0 && c.ID != chunks[0].ID) || c.Object != "chat.completion.chunk" || c.Model != "sim-model" {
			t.Errorf("chunk header %+v", c)
		}
		chunks = append(chunks, c)
		choices = append(choices, cs)
	}
	role := choices[0][0]
	if *role.Delta["role"] != "assistant" || *role.Delta["content"] != "" || role.FinishReason != nil {
		t.Errorf("first chunk = %s, want the role chunk", events[0])
	}
	var text string
	for i := 1; i <= 3; i++ {
		c := choices[i][0]
		if c.FinishReason != nil || c.Delta["role"] != nil {
			t.Errorf("content chunk %d = %s", i, events[i])
		}
		text += *c.Delta["content"]
	}
	if text != answer {
		t.Errorf("content %q, want %q", text, answer)
	}
	if f := choices[4][0]; f.FinishReason == nil || *f.FinishReason != "stop" || *f.Delta["content"] != "" {
		t.Errorf("finish chunk = %s", events[4])
	}
	for i := 0; i < 5; i++ {
		if chunks[i].Usage != nil {
			t.Errorf("chunk %d carries usage: %s", i, events[i])
		}
	}
	if string(chunks[5].Choices) != "[]" || chunks[5].Usage == nil {
		t.Errorf("usage chunk = %s, want \"choices\":[] and usage", events[5])
	}
	var u struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
		Details    *struct {
			Cached *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	if err := json.Unmarshal(chunks[5].Usage, &u); err != nil {
		t.Fatal(err)
	}
	// Without --enable-prompt-tokens-details vLLM leaves the details out.
	if u.Prompt != promptTokens("stage it", 0, 0) || u.Completion != 3 || u.Total != u.Prompt+3 || u.Details != nil {
		t.Errorf("usage = %s", chunks[5].Usage)
	}

	_, events = read(false)
	if len(events) != 6 || events[5] != "[DONE]" || strings.Contains(strings.Join(events, ""), `"usage"`) {
		t.Errorf("without include_usage: %d events, want 6 and no usage:\n%s", len(events), strings.Join(events, "\n"))
	}
}

// cachedTokens reads usage.prompt_tokens_details.cached_tokens; ok is
// false when the details are null or absent.
func cachedTokens(t *testing.T, u map[string]any) (n int, ok bool) {
	t.Helper()
	d, present := u["prompt_tokens_details"]
	if !present {
		t.Errorf("usage %v lacks prompt_tokens_details (a non-streamed answer has it, null when empty)", u)
	}
	dm, isMap := d.(map[string]any)
	if !isMap {
		return 0, false
	}
	return int(dm["cached_tokens"].(float64)), true
}

// TestNonStreamingAndPrefixCache: with --enable-prompt-tokens-details the
// cached tokens are reported, and, as in vLLM, only when there are some.
func TestNonStreamingAndPrefixCache(t *testing.T) {
	t.Parallel()
	key := writeKey(t, t.TempDir(), []simkey.Item{{ID: "A", Right: "A, C"}})
	p := start(t, "--sim-key", key, "--enable-prompt-tokens-details")
	system := strings.Repeat("You are a radiologist reading nasopharyngeal MRI. ", 8)
	req := map[string]any{"model": "sim-model", "messages": []any{
		map[string]any{"role": "system", "content": system},
		map[string]any{"role": "user", "content": "Which apply?"},
	}}
	want := promptTokens(system+"Which apply?", 0, 0)
	for i, wantCached := range []int{0, (want - 1) / 16 * 16} {
		status, m := p.chat(req)
		if status != http.StatusOK || m["object"] != "chat.completion" || content(t, m) != "A, C" {
			t.Fatalf("request %d: %d %v", i, status, m)
		}
		ch := m["choices"].([]any)[0].(map[string]any)
		if ch["finish_reason"] != "stop" {
			t.Errorf("finish_reason %v", ch["finish_reason"])
		}
		u := m["usage"].(map[string]any)
		cached, reported := cachedTokens(t, u)
		if int(u["prompt_tokens"].(float64)) != want || int(u["completion_tokens"].(float64)) != 1 || cached != wantCached ||
			reported != (wantCached > 0) {
			t.Errorf("request %d: usage %v, want prompt %d, completion 1, cached %d (details only when > 0)", i, u, want, wantCached)
		}
	}
	// A new question after the same system prompt reuses the system prefix.
	req["messages"].([]any)[1] = map[string]any{"role": "user", "content": "And now?"}
	_, m := p.chat(req)
	sys := promptTokens(system, 0, 0)
	if got, _ := cachedTokens(t, m["usage"].(map[string]any)); got != sys/16*16 {
		t.Errorf("cached_tokens after a shared system prompt = %d, want %d", got, sys/16*16)
	}
}

// TestCachedTokensOnlyWithTheFlag: like vLLM, an engine started without
// --enable-prompt-tokens-details never reports cached tokens, even when
// its prefix cache served some (the prefill is shorter all the same).
func TestCachedTokensOnlyWithTheFlag(t *testing.T) {
	t.Parallel()
	p := start(t)
	req := textMessage(strings.Repeat("the same long prompt ", 40), nil)
	for i := range 2 {
		status, m := p.chat(req)
		if status != http.StatusOK {
			t.Fatalf("request %d: %d %v", i, status, m)
		}
		u := m["usage"].(map[string]any)
		if _, reported := cachedTokens(t, u); reported {
			t.Errorf("request %d: usage %v reports cached tokens without --enable-prompt-tokens-details", i, u)
		}
	}
}

func TestMaxTokensTruncates(t *testing.T) {
	t.Parallel()
	answer := "The primary tumour invades the skull base: \\boxed{T3}"
	key := writeKey(t, t.TempDir(), []simkey.Item{{ID: "A", Right: answer}})
	p := start(t, "--sim-key", key)
	status, m := p.chat(textMessage("stage", map[string]any{"max_tokens": 3}))
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, m)
	}
	ch := m["choices"].([]any)[0].(map[string]any)
	if ch["finish_reason"] != "length" || content(t, m) != answer[:12] {
		t.Errorf("finish %v content %q, want length and %q", ch["finish_reason"], content(t, m), answer[:12])
	}
	if c := m["usage"].(map[string]any)["completion_tokens"].(float64); c != 3 {
		t.Errorf("completion_tokens %v, want 3", c)
	}
	// Streaming: the last content chunk carries finish_reason "length".
	b, _ := json.Marshal(textMessage("stage", map[string]any{"max_tokens": 3, "stream": true}))
	resp, err := http.Post(p.base+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	events := sseEvents(t, resp.Body)
	resp.Body.Close()
	last := events[len(events)-2]
	if events[len(events)-1] != "[DONE]" || !strings.Contains(last, `"finish_reason":"length"`) || !strings.Contains(last, `"content":"ary "`) {
		t.Errorf("stream end:\n%s", strings.Join(events, "\n"))
	}
}

func TestAPIKeyGuardsV1Only(t *testing.T) {
	t.Parallel()
	p := start(t, "--api-key", "k-123")
	for _, c := range []struct {
		method, path, key string
		want              int
	}{
		{http.MethodGet, "/v1/models", "", http.StatusUnauthorized},
		{http.MethodGet, "/v1/models", "wrong", http.StatusUnauthorized},
		{http.MethodPost, "/v1/chat/completions", "", http.StatusUnauthorized},
		{http.MethodGet, "/v1/models", "k-123", http.StatusOK},
		{http.MethodGet, "/health", "", http.StatusOK},
		{http.MethodGet, "/metrics", "", http.StatusOK},
	} {
		var body any
		if c.method == http.MethodPost {
			body = textMessage("hi", nil)
		}
		status, b := p.do(c.method, c.path, c.key, body)
		if status != c.want {
			t.Errorf("%s %s key %q = %d, want %d", c.method, c.path, c.key, status, c.want)
		}
		if c.want == http.StatusUnauthorized && string(b) != `{"error":"Unauthorized"}` {
			t.Errorf("401 body %s", b)
		}
	}
}

func TestTooManyImages(t *testing.T) {
	t.Parallel()
	p := start(t, "--limit-mm-per-prompt", `{"image":{"count":2,"width":512,"height":1644},"video":0}`)
	imgs := [][]byte{fakePNG(1), fakePNG(2), fakePNG(3)}
	status, body := p.do(http.MethodPost, "/v1/chat/completions", "", imageMessage("look", imgs, nil))
	want := `{"error":{"message":"At most 2 image(s) may be provided in one prompt. Set --limit-mm-per-prompt to increase this limit.","type":"BadRequestError","param":null,"code":400}}`
	if status != http.StatusBadRequest || string(body) != want {
		t.Errorf("3 images = %d %s\nwant 400 %s", status, body, want)
	}
	status, m := p.chat(imageMessage("look", imgs[:2], nil))
	if status != http.StatusOK {
		t.Errorf("2 images = %d %v", status, m)
	}
	if u := m["usage"].(map[string]any); int(u["prompt_tokens"].(float64)) != promptTokens("look", 2, 800) {
		t.Errorf("prompt_tokens %v, want %d", u["prompt_tokens"], promptTokens("look", 2, 800))
	}
	// Not an image at all.
	status, body = p.do(http.MethodPost, "/v1/chat/completions", "", imageMessage("look", [][]byte{[]byte("plain text")}, nil))
	if status != http.StatusBadRequest || !strings.Contains(string(body), "cannot identify image file") {
		t.Errorf("non-image = %d %s", status, body)
	}
}

func TestLocalMedia(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	allowed, outside := filepath.Join(root, "prepared"), filepath.Join(root, "elsewhere")
	for _, d := range []string{allowed, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inside := filepath.Join(allowed, "p01.png")
	secret := filepath.Join(outside, "secret.png")
	for i, f := range []string{inside, secret} {
		if err := os.WriteFile(f, fakePNG(i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(allowed, "escape.png")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	key := writeKey(t, root, []simkey.Item{{ID: "P01", Images: imageFingerprint(fakePNG(0)), Right: "\\boxed{1}"}})
	p := start(t, "--allowed-local-media-path", allowed, "--sim-key", key)
	fileMsg := func(path string) map[string]any {
		return map[string]any{"model": "sim-model", "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "file://" + path}},
			map[string]any{"type": "text", "text": "Is there invasion?"},
		}}}}
	}
	status, m := p.chat(fileMsg(inside))
	if status != http.StatusOK || content(t, m) != "\\boxed{1}" {
		t.Errorf("file inside the allowed path = %d %v, want the key's answer", status, m)
	}
	for _, path := range []string{secret, link, filepath.Join(allowed, "..", "elsewhere", "secret.png")} {
		status, body := p.do(http.MethodPost, "/v1/chat/completions", "", fileMsg(path))
		if status != http.StatusBadRequest || !strings.Contains(string(body), "must be a subpath of `--allowed-local-media-path`") {
			t.Errorf("file %s = %d %s, want 400 subpath error", path, status, body)
		}
	}
	q := start(t)
	status, body := q.do(http.MethodPost, "/v1/chat/completions", "", fileMsg(inside))
	if status != http.StatusBadRequest || !strings.Contains(string(body), "Cannot load local files without `--allowed-local-media-path`.") {
		t.Errorf("file URL without --allowed-local-media-path = %d %s", status, body)
	}
}

func TestContextLength(t *testing.T) {
	t.Parallel()
	p := start(t, "--max-model-len", "100")
	long := strings.Repeat("x", 400) // 100 tokens
	status, body := p.do(http.MethodPost, "/v1/chat/completions", "", textMessage(long, nil))
	if status != http.StatusBadRequest || !strings.Contains(string(body),
		"This model's maximum context length is 100 tokens. However, your request has 100 input tokens.") {
		t.Errorf("prompt of 100 tokens = %d %s", status, body)
	}
	mid := strings.Repeat("y", 200) // 50 tokens
	status, body = p.do(http.MethodPost, "/v1/chat/completions", "", textMessage(mid, map[string]any{"max_tokens": 51}))
	if status != http.StatusBadRequest || !strings.Contains(string(body),
		"'max_tokens' or 'max_completion_tokens' is too large: 51. This model's maximum context length is 100 tokens and your request has 50 input tokens (51 > 100 - 50).") {
		t.Errorf("50 + 51 tokens = %d %s", status, body)
	}
	if status, body = p.do(http.MethodPost, "/v1/chat/completions", "", textMessage(mid, map[string]any{"max_tokens": 50})); status != http.StatusOK {
		t.Errorf("50 + 50 tokens = %d %s", status, body)
	}
	if status, _ = p.do(http.MethodPost, "/v1/chat/completions", "", textMessage(mid, map[string]any{"max_tokens": 0})); status != http.StatusBadRequest {
		t.Errorf("max_tokens 0 = %d, want 400", status)
	}
}

func TestReasoning(t *testing.T) {
	t.Parallel()
	key := writeKey(t, t.TempDir(), []simkey.Item{{ID: "A", Right: "\\boxed{N1}"}})
	withParser := start(t, "--sim-key", key, "--sim-reasoning", "--reasoning-parser", "qwen3")
	b, _ := json.Marshal(textMessage("N stage?", map[string]any{"stream": true}))
	resp, err := http.Post(withParser.base+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	events := sseEvents(t, resp.Body)
	resp.Body.Close()
	var reasoning, text string
	sawContentFirst := false
	for _, ev := range events[1 : len(events)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					Content   *string `json:"content"`
					Reasoning *string `json:"reasoning"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatal(err)
		}
		d := c.Choices[0].Delta
		if d.Reasoning != nil {
			if text != "" {
				sawContentFirst = true
			}
			reasoning += *d.Reasoning
		}
		if d.Content != nil {
			text += *d.Content
		}
	}
	if reasoning == "" || sawContentFirst || text != "\\boxed{N1}" {
		t.Errorf("reasoning %q then content %q (content before reasoning: %v)", reasoning, text, sawContentFirst)
	}
	_, m := withParser.chat(textMessage("N stage?", map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}))
	if msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any); msg["reasoning"] != nil || msg["content"] != "\\boxed{N1}" {
		t.Errorf("enable_thinking=false: %v", msg)
	}

	noParser := start(t, "--sim-key", key, "--sim-reasoning")
	_, m = noParser.chat(textMessage("N stage?", nil))
	if got := content(t, m); !strings.HasPrefix(got, "<think>\n") || !strings.HasSuffix(got, "</think>\n\n\\boxed{N1}") {
		t.Errorf("content without a reasoning parser = %q, want <think>...</think> then the answer", got)
	}
}
