package inference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
)

// Answer is what a model said: content (reasoning stripped), the reasoning
// separately, how it finished, token usage and client-side timing.
type Answer struct {
	Content      string `json:"content"`
	Reasoning    string `json:"reasoning,omitempty"`
	FinishReason string `json:"finish_reason"`
	Usage        Usage  `json:"usage"`
	Timing       Timing `json:"timing"`
	// RequestBytes is the size of the request body as sent.
	RequestBytes int64 `json:"request_bytes,omitempty"`
}

// Usage counts tokens as the engine reports them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens are prompt tokens served from the prefix cache; nil
	// when the engine does not report them (a vLLM started without
	// --enable-prompt-tokens-details), which is not the same as 0.
	CachedTokens *int `json:"cached_tokens,omitempty"`
}

// WorkTokens are prompt tokens not served from cache plus completion tokens
// (CliniCARE-Bench §5.8); ok is false when the cached tokens are unknown.
func (u Usage) WorkTokens() (n int, ok bool) {
	if u.CachedTokens == nil {
		return 0, false
	}
	return u.PromptTokens - *u.CachedTokens + u.CompletionTokens, true
}

// Timing follows `vllm bench serve`: TTFT is the time to the first chunk with
// content, ITL the gaps between later chunks, TPOT = (E2E − TTFT)/(tokens − 1).
type Timing struct {
	TTFTms  float64 `json:"ttft_ms"`
	E2Ems   float64 `json:"e2e_ms"`
	TPOTms  float64 `json:"tpot_ms,omitempty"`
	ITLp50  float64 `json:"itl_p50_ms,omitempty"`
	ITLmax  float64 `json:"itl_max_ms,omitempty"`
	Chunks  int     `json:"chunks"`
	Started string  `json:"started"`
}

var (
	errFirstToken = errors.New("no first chunk within the first-token timeout")
	errChunk      = errors.New("no chunk within the between-chunk timeout")
	errTotal      = errors.New("request exceeded the total timeout")
	errDrain      = errors.New("the answer's body did not end after it was read")
)

// Client streams chat completions with separate connect, first-token,
// between-chunk and total timeouts.
type Client struct {
	settings configs.ClientSettings
	http     *http.Client
	now      func() time.Time
}

// NewClient returns a client with the given limits.
func NewClient(s configs.ClientSettings) *Client {
	dialer := &net.Dialer{Timeout: s.ConnectTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConnsPerHost: 256,
		// The connections' write buffers stay at Go's default 4 KiB:
		// every pooled connection holds one.
		IdleConnTimeout:    90 * time.Second,
		DisableCompression: true,
	}
	return &Client{settings: s, http: &http.Client{Transport: tr}, now: time.Now}
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Send streams a prepared request body to ep, the images its placeholder
// URLs stand for (inline, by index) read from their files as the body goes
// out, and collects the answer. An error is always a *Failure.
func (c *Client) Send(ctx context.Context, ep launcher.Endpoint, body openai.ChatCompletionRequest, inline []InlineImage) (*Answer, error) {
	return c.stream(ctx, ep, body, inline)
}

// Stream sends one streaming request body to ep and collects the answer. An
// error is always a *Failure. The body must not hold inline placeholders
// (use Send for a body with inline images).
func (c *Client) Stream(ctx context.Context, ep launcher.Endpoint, body openai.ChatCompletionRequest) (*Answer, error) {
	return c.stream(ctx, ep, body, nil)
}

func (c *Client) stream(ctx context.Context, ep launcher.Endpoint, body openai.ChatCompletionRequest, inline []InlineImage) (*Answer, error) {
	cfg := openai.DefaultConfig(ep.APIKey)
	cfg.BaseURL = strings.TrimSuffix(ep.BaseURL, "/")
	bw := &bodyWriter{next: c.http, inline: inline, sampling: greedyKeys(body)}
	cfg.HTTPClient = bw
	api := openai.NewClientWithConfig(cfg)

	ctx, cancelTotal := context.WithTimeoutCause(ctx, c.settings.TotalTimeout, errTotal)
	defer cancelTotal()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	bw.abort = func() { cancel(errDrain) }
	var streaming atomic.Bool
	watchdog := time.AfterFunc(c.settings.FirstTokenTimeout, func() {
		if streaming.Load() {
			cancel(errChunk)
		} else {
			cancel(errFirstToken)
		}
	})
	defer watchdog.Stop()

	start := c.now()
	body.Stream = true
	stream, err := api.CreateChatCompletionStream(ctx, body)
	if err != nil {
		if f := bw.failure(); f != nil {
			return nil, f
		}
		return nil, classify(ctx, err, false)
	}
	defer stream.Close()

	col := &collector{ans: &Answer{Timing: Timing{Started: start.UTC().Format(time.RFC3339Nano)}}}
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) && ctx.Err() == nil {
			break
		}
		if err != nil {
			return nil, classify(ctx, err, true)
		}
		now := c.now()
		var chunk streamChunk
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return nil, &AttemptFailure{Kind: FailStream, Err: fmt.Errorf("malformed chunk %.200q: %w", raw, err)}
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			// go-openai's reader catches `data: {"error":` lines itself
			// (classify reads those); this one had other spacing.
			if f := streamFailure(raw); f != nil {
				return nil, f
			}
		}
		if chunk.Usage != nil {
			col.ans.Usage = usageOf(chunk.Usage, ep.CachedTokens)
		}
		// The first-token deadline holds until the model says something: a
		// role chunk sent before prefill ends (SGLang, some proxies) must not
		// swap it for the shorter between-chunk timeout.
		if col.add(chunk, now) || streaming.Load() {
			streaming.Store(true)
			watchdog.Reset(c.settings.ChunkTimeout)
		}
	}
	if !col.finished {
		return nil, &AttemptFailure{Kind: FailTruncated, Err: errors.New("the stream ended without a finish reason")}
	}
	return col.answer(start, c.now(), bw.size), nil
}

// collector gathers an answer from the chunks of a stream as they arrive.
type collector struct {
	content, reasoning strings.Builder
	ans                *Answer
	first, last        time.Time
	gaps               []float64
	finished           bool
}

// add takes one chunk received at now; spoke reports whether the model
// said something in it (content, reasoning or a finish reason).
func (c *collector) add(chunk streamChunk, now time.Time) (spoke bool) {
	for _, ch := range chunk.Choices {
		// vLLM 0.1x copies reasoning into the deprecated
		// reasoning_content: read one, never both.
		r := ch.Delta.Reasoning
		if r == "" {
			r = ch.Delta.ReasoningContent
		}
		if ch.Delta.Content != "" || r != "" || ch.FinishReason != "" {
			spoke = true
		}
		if ch.Delta.Content != "" || r != "" {
			if c.first.IsZero() {
				c.first = now
			} else {
				c.gaps = append(c.gaps, ms(now.Sub(c.last)))
			}
			c.last = now
			c.ans.Timing.Chunks++
		}
		c.content.WriteString(ch.Delta.Content)
		c.reasoning.WriteString(r)
		if ch.FinishReason != "" {
			c.ans.FinishReason = ch.FinishReason
			c.finished = true
		}
	}
	return spoke
}

// answer is the answer of a stream started at start and ended at end,
// whose request body was requestBytes long.
func (c *collector) answer(start, end time.Time, requestBytes int64) *Answer {
	ans := c.ans
	ans.Content, ans.Reasoning = SplitReasoning(c.content.String(), c.reasoning.String())
	ans.RequestBytes = requestBytes
	ans.Timing.E2Ems = ms(end.Sub(start))
	if !c.first.IsZero() {
		ans.Timing.TTFTms = ms(c.first.Sub(start))
	}
	if n := ans.Usage.CompletionTokens; n > 1 && !c.first.IsZero() {
		ans.Timing.TPOTms = ms(end.Sub(c.first)) / float64(n-1)
	}
	ans.Timing.ITLp50, ans.Timing.ITLmax = medianMax(c.gaps)
	return ans
}

// streamChunk is one SSE data line of a chat completion stream, with the
// fields vLLM adds (reasoning, reasoning_content) and an inline error.
type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			Reasoning        string `json:"reasoning"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openai.Usage   `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// SplitReasoning strips reasoning from an answer: a leading <think>...</think>
// block in the content joins the reasoning field's text. An unclosed <think>
// leaves no answer: everything is reasoning.
func SplitReasoning(content, reasoning string) (answer, thought string) {
	thought = reasoning
	c := strings.TrimLeft(content, " \t\r\n")
	if strings.HasPrefix(c, "<think>") {
		end := strings.Index(c, "</think>")
		if end < 0 {
			return "", joinNonEmpty(thought, strings.TrimPrefix(c, "<think>"))
		}
		thought = joinNonEmpty(thought, c[len("<think>"):end])
		content = c[end+len("</think>"):]
	} else if end := strings.Index(c, "</think>"); end >= 0 && !strings.Contains(c[:end], "<think>") {
		// Some templates open the block in the prompt: only the close is streamed.
		thought = joinNonEmpty(thought, c[:end])
		content = c[end+len("</think>"):]
	}
	return strings.TrimSpace(content), strings.TrimSpace(thought)
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n" + b
}

// classify turns an error of the HTTP exchange into a *Failure. streaming
// says the error came while reading an opened stream: only such an error
// can have cut the answer short (truncated); one before is the transport's.
func classify(ctx context.Context, err error, streaming bool) error {
	if cause := context.Cause(ctx); cause != nil {
		switch {
		case errors.Is(cause, errFirstToken):
			return &AttemptFailure{Kind: FailFirstToken, Err: cause}
		case errors.Is(cause, errChunk):
			return &AttemptFailure{Kind: FailChunk, Err: cause}
		case errors.Is(cause, errTotal):
			return &AttemptFailure{Kind: FailTotal, Err: cause}
		}
		if ctx.Err() != nil && errors.Is(cause, context.Canceled) {
			return &AttemptFailure{Kind: FailConnect, Err: fmt.Errorf("cancelled: %w", cause)}
		}
	}
	// An HTTP status is the surest witness. go-openai turns a body it
	// can read ({"error": {...}}) into an APIError and any other (vLLM's
	// old flat body, {"error": "Unauthorized"}) into a RequestError that
	// keeps the body; an error object inside a 200 stream comes back as an
	// APIError without a status, its code in the body's "code".
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0 {
		return httpFailure(reqErr.HTTPStatusCode, errors.New(requestErrorText(reqErr)))
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		e := engineError{Message: apiErr.Message, Type: apiErr.Type, Code: apiCode(apiErr.Code)}
		if apiErr.HTTPStatusCode == 0 {
			return &AttemptFailure{Kind: FailStream, Status: e.Code, Err: errors.New(e.text())}
		}
		return httpFailure(apiErr.HTTPStatusCode, errors.New(e.text()))
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED) {
		return &AttemptFailure{Kind: FailConnect, Err: err}
	}
	if strings.HasPrefix(err.Error(), "error, ") {
		return &AttemptFailure{Kind: FailStream, Err: err}
	}
	if !streaming {
		return &AttemptFailure{Kind: FailTransport, Err: err}
	}
	return &AttemptFailure{Kind: FailTruncated, Err: err}
}

// streamFailure is the failure an error object inside a 200 stream makes
// (line is its JSON), keeping the engine's message and code.
func streamFailure(line []byte) *AttemptFailure {
	e, ok := parseEngineError(line)
	if !ok {
		return &AttemptFailure{Kind: FailStream, Err: fmt.Errorf("error inside the stream: %s", bodySnippet(line))}
	}
	return &AttemptFailure{Kind: FailStream, Status: e.Code, Err: errors.New(e.text())}
}

// requestErrorText is what an HTTP error body says, in whatever shape.
func requestErrorText(r *openai.RequestError) string {
	if e, ok := parseEngineError(r.Body); ok {
		return e.text()
	}
	if len(bytes.TrimSpace(r.Body)) > 0 {
		return bodySnippet(r.Body)
	}
	if r.HTTPStatus != "" {
		return r.HTTPStatus + " with an empty body"
	}
	return http.StatusText(r.HTTPStatusCode) + " with an empty body"
}

// apiCode reads go-openai's APIError.Code: an int, or a numeric string.
func apiCode(c any) int {
	switch v := c.(type) {
	case int:
		return v
	case float64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

func httpFailure(status int, err error) *AttemptFailure {
	if status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout {
		return &AttemptFailure{Kind: FailServer, Status: status, Err: err}
	}
	return &AttemptFailure{Kind: FailRejected, Status: status, Err: err}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func medianMax(v []float64) (median, max float64) {
	if len(v) == 0 {
		return 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)-1]
}

// usageOf reads a usage chunk. Cached tokens are reported when the chunk
// has them, or when the engine reports them (reports) and left them out
// because there were none, which is what vLLM does.
func usageOf(u *openai.Usage, reports bool) Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	switch {
	case u.PromptTokensDetails != nil:
		n := u.PromptTokensDetails.CachedTokens
		out.CachedTokens = &n
	case reports:
		zero := 0
		out.CachedTokens = &zero
	}
	return out
}
