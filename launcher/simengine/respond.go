package simengine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Wire types of vLLM's chat completion responses, fields in vLLM's order.
type (
	chunk struct {
		ID      string        `json:"id"`
		Object  string        `json:"object"`
		Created int64         `json:"created"`
		Model   string        `json:"model"`
		Choices []chunkChoice `json:"choices"`
		Usage   *streamUsage  `json:"usage,omitempty"`
	}
	chunkChoice struct {
		Index        int             `json:"index"`
		Delta        delta           `json:"delta"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason,omitempty"`
	}
	delta struct {
		Role      string      `json:"role,omitempty"`
		Content   *string     `json:"content,omitempty"`
		Reasoning *string     `json:"reasoning,omitempty"`
		ToolCalls []deltaCall `json:"tool_calls,omitempty"`
	}
	// usage is a whole answer's usage: prompt_tokens_details is null
	// unless --enable-prompt-tokens-details is set and tokens were cached.
	usage struct {
		PromptTokens        int                  `json:"prompt_tokens"`
		TotalTokens         int                  `json:"total_tokens"`
		CompletionTokens    int                  `json:"completion_tokens"`
		PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details"`
	}
	// streamUsage is the usage chunk's: vLLM dumps it without None
	// fields, so the details are absent rather than null.
	streamUsage struct {
		PromptTokens        int                  `json:"prompt_tokens"`
		TotalTokens         int                  `json:"total_tokens"`
		CompletionTokens    int                  `json:"completion_tokens"`
		PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
	}
	promptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	}
	completion struct {
		ID             string             `json:"id"`
		Object         string             `json:"object"`
		Created        int64              `json:"created"`
		Model          string             `json:"model"`
		Choices        []completionChoice `json:"choices"`
		Usage          usage              `json:"usage"`
		PromptLogprobs json.RawMessage    `json:"prompt_logprobs"`
	}
	completionChoice struct {
		Index        int             `json:"index"`
		Message      message         `json:"message"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
	}
	message struct {
		Role         string          `json:"role"`
		Content      *string         `json:"content"`
		Refusal      json.RawMessage `json:"refusal"`
		Annotations  json.RawMessage `json:"annotations"`
		Audio        json.RawMessage `json:"audio"`
		FunctionCall json.RawMessage `json:"function_call"`
		ToolCalls    []any           `json:"tool_calls"`
		Reasoning    *string         `json:"reasoning"`
	}
)

var jsonNull = json.RawMessage("null")

// serve runs one validated request through the scheduler and answers it,
// streaming or not, applying the fault the request meets.
func (e *engine) serve(w http.ResponseWriter, r *http.Request, req *chatRequest, p *prompt, out output) {
	arrived := e.clock.Now()
	mode := e.faults.mode()
	if mode == faultUnavailable {
		e.fail(w, http.StatusServiceUnavailable, faultMessage)
		return
	}
	ctx := r.Context()
	seat, err := e.sched.acquire(ctx, p.tokens)
	if err != nil {
		return // client gone while waiting
	}
	hung := false
	defer func() {
		if !hung { // a hung request holds its place, as on a stuck engine
			seat.release()
		}
	}()
	cached := e.prefix.lookup(p, e.o.PrefixCaching, e.o.BlockSize)
	prefill := tokensTime(p.tokens-cached, e.o.PrefillTPS)
	if e.sleep(ctx, prefill) != nil {
		e.m.success.WithLabelValues("abort").Inc()
		return
	}
	e.m.work.Add(prefill.Seconds())
	e.m.prompt.Add(float64(p.tokens))
	u := usage{PromptTokens: p.tokens, CompletionTokens: out.tokens, TotalTokens: p.tokens + out.tokens}
	if e.o.PromptTokensDetails && cached > 0 { // as vLLM: only when asked, and only when some were
		u.PromptTokensDetails = &promptTokensDetails{CachedTokens: cached}
	}
	id := e.requestID(e.requests.Add(1))
	created := e.clock.Now().Unix()
	// A faulty request stops halfway through its pieces.
	stopAt := -1
	if mode == faultHang || mode == faultStreamError {
		stopAt = len(out.pieces) / 2
	}

	// The request counts as completed just before its last bytes go out:
	// a client that has read the whole answer and sends its next request
	// must find the fault counters already moved on.
	completed, crash := false, false
	completing := func() {
		completed = true
		e.m.success.WithLabelValues(out.finish).Inc()
		e.m.e2e.Observe(e.clock.Now().Sub(arrived).Seconds())
		crash = e.faults.complete()
	}
	var ok bool
	if req.Stream {
		ok, hung = e.stream(ctx, w, seat, id, created, out, stopAt, mode, req.StreamOptions != nil && req.StreamOptions.IncludeUsage, u, arrived, completing)
	} else {
		ok, hung = e.respond(ctx, w, seat, id, created, out, stopAt, mode, u, arrived, completing)
	}
	if !completed && !hung {
		e.m.success.WithLabelValues("abort").Inc()
	}
	// crash-after fires once a completed answer has reached the client; a
	// client gone before the last bytes leaves it armed for the next one.
	if crash && ok {
		e.crashAfterResponse("crash-after")
	}
}

// decode spends the decode time of one piece and records its tokens.
func (e *engine) decode(ctx context.Context, seat *seat, pc piece) error {
	d := tokensTime(pc.tokens, e.o.DecodeTPS)
	if err := e.sleep(ctx, d); err != nil {
		return err
	}
	e.m.work.Add(d.Seconds())
	seat.grow(pc.tokens)
	e.m.generation.Add(float64(pc.tokens))
	return nil
}

// hang blocks until the client or the engine goes away.
func (e *engine) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-e.stopping:
	}
}

// generation is how decodeAll ended.
type generation int

const (
	generated generation = iota // every piece was emitted
	aborted                     // the client or the engine went away
	hungUp                      // a hang fault held the request until then
	faulted                     // a stream-error fault stopped it
)

// faultMessage is what vLLM says when its engine core fails mid-request.
const faultMessage = "EngineCore encountered an issue. See stack trace (above) for the root cause."

// decodeAll spends the decode time of out's pieces one after the other and
// hands each to emit as it is ready. A faulty request stops at piece
// stopAt (half way, for a request that met a fault as it arrived), and a
// request already streaming at its next piece once a hang is switched on
// at run time: a hang holds it until the client or the engine goes away.
func (e *engine) decodeAll(ctx context.Context, seat *seat, out output, stopAt int, mode faultMode, arrived time.Time,
	emit func(i int, pc piece) error) generation {
	for i := 0; i <= len(out.pieces); i++ {
		if mode != faultHang && i < len(out.pieces) {
			switch e.faults.inFlight() {
			case faultHang:
				e.hang(ctx)
				return hungUp
			case faultUnavailable:
				return faulted
			}
		}
		if i == stopAt {
			if mode == faultHang {
				e.hang(ctx)
				return hungUp
			}
			return faulted
		}
		if i == len(out.pieces) {
			break
		}
		pc := out.pieces[i]
		if e.decode(ctx, seat, pc) != nil {
			return aborted
		}
		if i == 0 {
			e.m.ttft.Observe(e.clock.Now().Sub(arrived).Seconds())
		}
		if emit(i, pc) != nil {
			return aborted
		}
	}
	return generated
}

// stream writes the SSE answer exactly as vLLM does: role chunk, delta
// chunks, a finish_reason chunk, the usage chunk with empty choices when
// asked for, then [DONE]. It calls completing just before the last chunk
// and reports whether the request completed and whether it hung.
func (e *engine) stream(ctx context.Context, w http.ResponseWriter, seat *seat, id string, created int64,
	out output, stopAt int, mode faultMode, includeUsage bool, u usage, arrived time.Time, completing func()) (ok, hung bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(v []byte) error {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", v); err != nil {
			return err
		}
		return rc.Flush()
	}
	mk := func(d delta, finish *string, stop json.RawMessage) []byte {
		return marshal(chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: e.o.ServedName,
			Choices: []chunkChoice{{Delta: d, Logprobs: jsonNull, FinishReason: finish, StopReason: stop}}})
	}
	if send(mk(delta{Role: "assistant", Content: ptr("")}, nil, nil)) != nil {
		return false, false
	}
	end := e.decodeAll(ctx, seat, out, stopAt, mode, arrived, func(i int, pc piece) error {
		d := delta{Content: ptr(pc.text)}
		switch {
		case pc.reasoning:
			d = delta{Reasoning: ptr(pc.text)}
		case pc.call != nil:
			d = delta{ToolCalls: []deltaCall{*pc.call}}
		}
		var finish *string
		var stop json.RawMessage
		if i == len(out.pieces)-1 && out.finish == "length" && out.calls == 0 {
			finish, stop = ptr("length"), jsonNull
		}
		return send(mk(d, finish, stop))
	})
	switch end {
	case hungUp:
		return false, true
	case aborted:
		return false, false
	case faulted:
		_ = send(streamError(http.StatusInternalServerError, faultMessage))
		_ = send([]byte("[DONE]"))
		return false, false
	}
	// Once a tool call was streamed vLLM rewrites the finish reason to
	// "tool_calls" whatever the engine's was: a call cut off by the
	// token limit is reported complete (vLLM #53269).
	switch {
	case out.calls > 0:
		if send(mk(delta{}, ptr("tool_calls"), jsonNull)) != nil {
			return false, false
		}
	case out.finish == "stop" || len(out.pieces) == 0: // a budget spent before any delta still ends with a reason
		if send(mk(delta{Content: ptr("")}, ptr(out.finish), jsonNull)) != nil {
			return false, false
		}
	}
	if includeUsage {
		su := streamUsage(u)
		body := marshal(chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: e.o.ServedName,
			Choices: []chunkChoice{}, Usage: &su})
		if send(body) != nil {
			return false, false
		}
	}
	completing()
	return send([]byte("[DONE]")) == nil, false
}

// respond generates the whole answer and writes one chat.completion,
// calling completing just before it.
func (e *engine) respond(ctx context.Context, w http.ResponseWriter, seat *seat, id string, created int64,
	out output, stopAt int, mode faultMode, u usage, arrived time.Time, completing func()) (ok, hung bool) {
	var content, reasoning strings.Builder
	end := e.decodeAll(ctx, seat, out, stopAt, mode, arrived, func(_ int, pc piece) error {
		switch {
		case pc.reasoning:
			reasoning.WriteString(pc.text)
		case pc.call == nil:
			content.WriteString(pc.text)
		}
		return nil
	})
	switch end {
	case hungUp:
		return false, true
	case aborted:
		return false, false
	case faulted:
		e.fail(w, http.StatusInternalServerError, faultMessage)
		return false, false
	}
	msg := message{Role: "assistant", Content: ptr(content.String()), Refusal: jsonNull, Annotations: jsonNull,
		Audio: jsonNull, FunctionCall: jsonNull, ToolCalls: assemble(out.pieces)}
	if reasoning.Len() > 0 {
		msg.Reasoning = ptr(reasoning.String())
	}
	finish := out.finish
	if out.calls > 0 {
		// Not streamed, vLLM says "tool_calls" only for an engine "stop".
		msg.Content = nil
		if finish == "stop" {
			finish = "tool_calls"
		}
	}
	completing()
	writeJSON(w, http.StatusOK, completion{ID: id, Object: "chat.completion", Created: created, Model: e.o.ServedName,
		Choices: []completionChoice{{Message: msg, Logprobs: jsonNull, FinishReason: finish, StopReason: jsonNull}},
		Usage:   u, PromptLogprobs: jsonNull})
	return true, false
}

// streamError is the data of the line vLLM sends when a stream fails
// after its 200: the error body written by Python's json.dumps (", " and
// ": " separators; create_streaming_error_response), followed by [DONE].
func streamError(status int, msg string) []byte {
	info := newErrorResponse(status, msg, "").Error
	return fmt.Appendf(nil, `{"error": {"message": %s, "type": %s, "param": null, "code": %d}}`,
		marshal(info.Message), marshal(info.Type), info.Code)
}

// tokensTime is how long n tokens take at tps tokens per second.
func tokensTime(n int, tps float64) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / tps * float64(time.Second))
}

// requestID returns vLLM-shaped ids, unique per engine start.
func (e *engine) requestID(n uint64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d|%s|%d", e.started.UnixNano(), e.o.ServedName, n))
	return fmt.Sprintf("chatcmpl-%x", sum[:16])
}

// prefixCache remembers the prompt prefixes (at message boundaries) the
// engine has computed, like vLLM's automatic prefix caching.
type prefixCache struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// prefixCacheLimit bounds the remembered prefixes; the cache empties when
// full, as an evicting KV cache would.
const prefixCacheLimit = 1 << 18

// lookup returns how many prompt tokens were cached (whole blocks, never
// the last token) and remembers p's prefixes.
func (c *prefixCache) lookup(p *prompt, enabled bool, block int) int {
	if !enabled {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || len(c.seen) > prefixCacheLimit {
		c.seen = map[[32]byte]bool{}
	}
	best := 0
	for _, m := range p.prefixes {
		if c.seen[m.hash] {
			best = max(best, m.tokens)
		}
		c.seen[m.hash] = true
	}
	limit := p.tokens - 1
	return min(best, limit) / block * block
}
