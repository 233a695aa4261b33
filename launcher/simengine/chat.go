package simengine

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// maxBodyBytes bounds one request body (80 base64 images fit many times).
const maxBodyBytes = 512 << 20

// chatRequest is the part of an OpenAI chat completion request the
// simulation reads; every other field is accepted and ignored.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	ReasoningEffort     json.RawMessage `json:"reasoning_effort"`
	Tools               *[]toolParam    `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// ToolCalls are an assistant message's calls (they count in the
	// prompt and its prefix hashes).
	ToolCalls []wireCall `json:"tool_calls"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// prompt is what the engine learned from a request's messages.
type prompt struct {
	text        string // every text part, joined by "\n"
	images      int
	fingerprint string // simkey.Fingerprint of the images
	tokens      int
	// prefixes are the cumulative prompt hashes and token counts at each
	// message boundary (for prefix caching).
	prefixes []prefixMark
}

type prefixMark struct {
	hash   [32]byte
	tokens int
}

// handleChat serves POST /v1/chat/completions.
func (e *engine) handleChat(w http.ResponseWriter, r *http.Request) {
	if !e.ready.Load() || e.dead() {
		e.fail(w, http.StatusServiceUnavailable, faultMessage)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			e.fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes))
			return
		}
		e.fail(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if req.Model != "" && req.Model != e.o.ServedName {
		writeJSON(w, http.StatusNotFound, newErrorResponse(http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", req.Model), "model"))
		return
	}
	if req.StreamOptions != nil && !req.Stream {
		e.fail(w, http.StatusBadRequest, "Stream options can only be defined when `stream=True`.")
		return
	}
	if len(req.Messages) == 0 {
		e.fail(w, http.StatusBadRequest, "messages: at least one message is required")
		return
	}
	structured, err := structuredOutput(req.ResponseFormat)
	if err == nil {
		err = checkReasoningEffort(req.ReasoningEffort)
	}
	if err != nil {
		e.failRequest(w, err)
		return
	}
	p, err := e.readPrompt(req.Messages)
	if err != nil {
		e.failRequest(w, err)
		return
	}
	maxTokens, err := e.outputBudget(&req, p.tokens)
	if err != nil {
		e.failRequest(w, err)
		return
	}
	out, err := e.reply(&req, p, structured, maxTokens)
	if err != nil {
		e.failRequest(w, err)
		return
	}
	e.serve(w, r, &req, p, out)
}

// reply is what the model generates: a scripted agent turn when the
// request carries tools, an answer from the sim key otherwise.
func (e *engine) reply(req *chatRequest, p *prompt, structured bool, maxTokens int) (output, error) {
	tc, err := e.checkTools(req)
	if err != nil {
		return output{}, err
	}
	if tc != nil && req.Tools != nil {
		s, n, err := e.scriptedTurn(req, tc)
		if err != nil {
			return output{}, err
		}
		return e.scriptedOutput(s, n, maxTokens), nil
	}
	think := e.o.Reasoning
	if v, ok := req.ChatTemplateKwargs["enable_thinking"].(bool); ok && !v {
		think = false
	}
	return e.generate(e.answer(p, structured), think, maxTokens), nil
}

// readPrompt collects text and images, enforces --limit-mm-per-prompt and
// counts prompt tokens: ceil(text runes / 4) + images × --sim-image-tokens.
func (e *engine) readPrompt(msgs []chatMessage) (*prompt, error) {
	parts := make([][]contentPart, len(msgs))
	images := 0
	for i, m := range msgs {
		ps, err := contentParts(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %v", i, err)
		}
		parts[i] = ps
		for _, p := range ps {
			if p.Type == "image_url" {
				images++
			}
		}
	}
	if images > e.o.ImageLimit {
		return nil, badRequest("At most %d image(s) may be provided in one prompt. Set --limit-mm-per-prompt to increase this limit.", e.o.ImageLimit)
	}
	p := &prompt{}
	var texts, hashes []string
	runes := 0
	h := sha256.New()
	for i, ps := range parts {
		h.Write([]byte("\x00role:" + msgs[i].Role + "\x00"))
		for _, part := range ps {
			switch part.Type {
			case "text":
				texts = append(texts, part.Text)
				runes += utf8.RuneCountInString(part.Text)
				h.Write([]byte("text:" + part.Text + "\x00"))
			case "image_url":
				if part.ImageURL == nil || part.ImageURL.URL == "" {
					return nil, badRequest("messages[%d]: image_url part without a url", i)
				}
				digest, err := e.imageDigest(part.ImageURL.URL, len(hashes)+1)
				if err != nil {
					return nil, err
				}
				hashes = append(hashes, digest)
				h.Write([]byte("image:" + hashes[len(hashes)-1] + "\x00"))
			default:
				return nil, badRequest("messages[%d]: unsupported content part type %q (the simulated engine takes text and image_url)", i, part.Type)
			}
		}
		for _, c := range msgs[i].ToolCalls {
			h.Write([]byte("call:" + c.Function.Name + "\x00" + c.Function.Arguments + "\x00"))
			runes += utf8.RuneCountInString(c.Function.Name) + utf8.RuneCountInString(c.Function.Arguments)
		}
		var mark prefixMark
		copy(mark.hash[:], h.Sum(nil))
		mark.tokens = (runes+3)/4 + len(hashes)*e.o.ImageTokens
		p.prefixes = append(p.prefixes, mark)
	}
	p.text = strings.Join(texts, "\n")
	p.images = len(hashes)
	p.fingerprint = simkey.Fingerprint(hashes)
	p.tokens = p.prefixes[len(p.prefixes)-1].tokens
	return p, nil
}

// contentParts reads a message content: a string, an array of parts, or null.
func contentParts(raw json.RawMessage) ([]contentPart, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return nil, nil
	case strings.HasPrefix(s, `"`):
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, err
		}
		return []contentPart{{Type: "text", Text: text}}, nil
	case strings.HasPrefix(s, "["):
		var ps []contentPart
		if err := json.Unmarshal(raw, &ps); err != nil {
			return nil, err
		}
		return ps, nil
	}
	return nil, errors.New("must be a string or an array of content parts")
}

// outputBudget returns the request's max_tokens, or what the context leaves,
// with vLLM's errors when the prompt and budget exceed --max-model-len.
func (e *engine) outputBudget(req *chatRequest, promptTokens int) (int, error) {
	limit := e.o.MaxModelLen
	if promptTokens >= limit {
		return 0, badParam("input_tokens", "This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", limit, promptTokens)
	}
	mt := req.MaxCompletionTokens
	if mt == nil {
		mt = req.MaxTokens
	}
	if mt == nil {
		return limit - promptTokens, nil
	}
	if *mt < 1 {
		return 0, badParam("max_tokens", "max_tokens must be at least 1, got %d.", *mt)
	}
	if promptTokens+*mt > limit {
		return 0, badParam("max_tokens", "'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d).",
			*mt, limit, promptTokens, *mt, limit, promptTokens)
	}
	return *mt, nil
}

// answer picks the reply for a prompt from the sim key and the policy: a
// verdict for a judge's item, a composed text for an item with parts, one
// of its answers otherwise. Under structured outputs the reply is a JSON
// object (constrained).
func (e *engine) answer(p *prompt, structured bool) string {
	it := e.key.Match(p.fingerprint, p.text)
	var ans string
	switch {
	case it == nil:
		fp := p.fingerprint
		if fp == "" {
			fp = "none"
		}
		e.log.vllm("WARNING", "sim_engine.py:1", "no sim-key item matches the request (images fingerprint %s, %d image(s)); answering garbage", fp, p.images)
		ans = garbage(fp + "|" + p.text)
	case it.Verdict != nil:
		ans = e.o.Policy.verdict(e.o.Seed, e.o.ServedName, it, p.text, structured)
	case len(it.Parts) > 0:
		ans = e.o.Policy.compose(e.o.Seed, e.o.ServedName, it)
	default:
		ans = e.o.Policy.answer(e.o.Seed, e.o.ServedName, it)
	}
	if structured {
		return constrained(ans, it)
	}
	return ans
}

// thinking is the reasoning the simulated model writes before its answer.
const thinking = "Let me look at each image in turn, note the findings that matter for this question, and weigh them before I answer."

// thought is the reasoning written before each answer: the thinking
// sentence, repeated up to --sim-reasoning-tokens tokens when that is set
// (a model that reasons at length, and whose answer a small output budget
// cuts off).
func (e *engine) thought() string {
	if e.o.ReasoningTokens <= 0 {
		return thinking
	}
	var b strings.Builder
	for b.Len() < 4*e.o.ReasoningTokens {
		b.WriteString(thinking + " ")
	}
	return string([]rune(b.String())[:4*e.o.ReasoningTokens])
}

// piece is one streamed delta: a few tokens of reasoning or of content,
// or a fragment of a tool call.
type piece struct {
	reasoning bool
	text      string
	call      *deltaCall
	tokens    int
}

// output is what the simulated model generates for one request.
type output struct {
	pieces []piece
	tokens int    // completion tokens
	finish string // the engine's reason: "stop" or "length"
	calls  int    // tool calls among the pieces
}

// generate turns the answer (and optional thinking) into streamed pieces of
// --sim-chunk-tokens tokens (a token is 4 runes), cut at maxTokens.
func (e *engine) generate(answer string, think bool, maxTokens int) output {
	var segs []piece
	thought := e.thought()
	switch {
	case think && e.o.ReasoningParse != "":
		segs = []piece{{reasoning: true, text: thought}, {text: answer}}
	case think:
		segs = []piece{{text: "<think>\n" + thought + "\n</think>\n\n" + answer}}
	default:
		segs = []piece{{text: answer}}
	}
	out := output{finish: "stop"}
	for _, seg := range segs {
		toks := splitTokens(seg.text)
		for len(toks) > 0 {
			n := min(e.o.ChunkTokens, len(toks))
			if out.tokens+n > maxTokens {
				n = maxTokens - out.tokens
				out.finish = "length"
			}
			if n == 0 {
				return out
			}
			out.pieces = append(out.pieces, piece{reasoning: seg.reasoning, text: strings.Join(toks[:n], ""), tokens: n})
			out.tokens += n
			toks = toks[n:]
		}
	}
	return out
}

// splitTokens cuts s into simulated tokens of 4 runes.
func splitTokens(s string) []string {
	var toks []string
	for len(s) > 0 {
		i, n := 0, 0
		for i < len(s) && n < 4 {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
		}
		toks = append(toks, s[:i])
		s = s[i:]
	}
	return toks
}

func ptr[T any](v T) *T { return &v }
