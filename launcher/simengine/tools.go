package simengine

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/npcorch/npcorch/launcher/simscript"
)

// Tool calling, as vLLM's OpenAI server does it on the wire. The answers
// come from a script (package launcher/simscript): the request's system
// and first user message give its key, the assistant messages already in
// the history say which turn comes next, and the history must be the
// script so far. Sources: vllm/entrypoints/openai/chat_completion/
// protocol.py (check_tool_usage) and serving.py, engine/protocol.py
// (ToolCall, DeltaToolCall, DeltaFunctionCall); see
// testdata/conformance/vllm-tools.json.

// toolParam is one entry of a request's tools.
type toolParam struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// wireCall is a tool call as a message of the history carries it, and as
// a non-streamed answer gives it (vLLM's ToolCall: id, type, function).
type wireCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// deltaCall is vLLM's DeltaToolCall as a chunk dumps it with
// exclude_unset: the first fragment of a call carries id, type and the
// function's name, later ones the index and an arguments fragment.
type deltaCall struct {
	ID       string         `json:"id,omitempty"`
	Type     string         `json:"type,omitempty"`
	Index    int            `json:"index"`
	Function *deltaFunction `json:"function,omitempty"`
}

type deltaFunction struct {
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// toolChoice is a request's tool_choice after vLLM's check_tool_usage:
// mode "none", "auto", "required" or "named" (with name).
type toolChoice struct {
	mode, name string
}

// checkTools validates tools and tool_choice the way vLLM's
// check_tool_usage and its serving layer do; a nil choice means the
// request uses no tools.
func (e *engine) checkTools(req *chatRequest) (*toolChoice, error) {
	raw := bytes.TrimSpace(req.ToolChoice)
	hasChoice := len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
	if req.Tools != nil && len(*req.Tools) == 0 {
		return nil, badParam("tools", "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.")
	}
	if !hasChoice && req.Tools == nil {
		return nil, nil
	}
	tc := &toolChoice{mode: "auto"} // vLLM's default when tools are given
	if hasChoice {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(raw, &s) == nil:
			tc.mode = s
		case json.Unmarshal(raw, &named) == nil && raw[0] == '{':
			if named.Function == nil || named.Function.Name == "" {
				return nil, badParam("tool_choice", `Incorrect usage of tool_choice. Correct usage: {"type": "function", "function": {"name": "my_function"}}`)
			}
			tc.mode, tc.name = "named", named.Function.Name
		default:
			return nil, badParam("tool_choice", "Invalid value for `tool_choice`: %s! Only named tools, \"none\", \"auto\" or \"required\" are supported.", raw)
		}
	}
	if tc.mode == "none" {
		return tc, nil
	}
	if req.Tools == nil {
		return nil, badParam("tool_choice", "When using `tool_choice`, `tools` must be set.")
	}
	switch tc.mode {
	case "auto":
		if !e.o.AutoToolChoice || e.o.ToolParser == "" {
			return nil, badParam("tool_choice", "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set")
		}
	case "required":
	case "named":
		if !listed(*req.Tools, tc.name) {
			return nil, badParam("tool_choice", "Tool '%s' has not been passed in `tools`.", tc.name)
		}
	default:
		return nil, badParam("tool_choice", "Invalid value for `tool_choice`: %s! Only named tools, \"none\", \"auto\" or \"required\" are supported.", tc.mode)
	}
	return tc, nil
}

func listed(tools []toolParam, name string) bool {
	for _, t := range tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// scriptedTurn finds the request's script, checks its history and returns
// the turn to answer with its index.
func (e *engine) scriptedTurn(req *chatRequest, tc *toolChoice) (*simscript.Script, int, error) {
	system, user, hist, err := conversation(req.Messages)
	if err != nil {
		return nil, 0, err
	}
	key := simscript.Key(system, user)
	s := e.script.Find(key)
	if s == nil {
		where := "no --sim-script was given"
		if e.o.ScriptFile != "" {
			where = "not in " + e.o.ScriptFile
		}
		return nil, 0, badParam("messages", "sim script: no script for key %s (simscript.Key of the system and first user message; %s)", key, where)
	}
	n, err := s.Check(hist)
	if err != nil {
		return nil, 0, badParam("messages", "sim script: %v", err)
	}
	if err := fits(s, n, req, tc); err != nil {
		return nil, 0, badParam("tool_choice", "sim script: %v", err)
	}
	return s, n, nil
}

// fits checks that turn n of s is an answer the request allows.
func fits(s *simscript.Script, n int, req *chatRequest, tc *toolChoice) error {
	t := s.Turns[n]
	calls := len(t.Calls) > 0 && t.Defect != simscript.Unparsed
	switch {
	case tc.mode == "none" && calls:
		return fmt.Errorf("script %s turn %d calls tools but the request says tool_choice \"none\"", s.Name, n)
	case tc.mode == "required" && !calls, tc.mode == "named" && !calls:
		return fmt.Errorf("script %s turn %d makes no tool call but the request's tool_choice demands one", s.Name, n)
	}
	for _, c := range t.Calls {
		if tc.mode == "named" && c.Name != tc.name {
			return fmt.Errorf("script %s turn %d calls %s but tool_choice names %s", s.Name, n, c.Name, tc.name)
		}
	}
	if unlisted := anyUnlisted(t, *req.Tools); len(t.Calls) > 0 && unlisted != (t.Defect == simscript.UnlistedTool) {
		return fmt.Errorf("script %s turn %d: calls an unlisted tool: %v, but the turn's defect is %q (mark it %s only when it calls a tool the request does not list)",
			s.Name, n, unlisted, t.Defect, simscript.UnlistedTool)
	}
	return nil
}

func anyUnlisted(t simscript.Turn, tools []toolParam) bool {
	for _, c := range t.Calls {
		if !listed(tools, c.Name) {
			return true
		}
	}
	return false
}

// conversation returns the text of the first system and first user
// message, and the assistant messages of the history.
func conversation(msgs []chatMessage) (system, user string, hist []simscript.Sent, err error) {
	seenSystem, seenUser := false, false
	for i, m := range msgs {
		ps, err := contentParts(m.Content)
		if err != nil {
			return "", "", nil, badParam("messages", "messages[%d].content: %v", i, err)
		}
		var texts []string
		for _, p := range ps {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		text := strings.Join(texts, "\n")
		switch m.Role {
		case "system":
			if !seenSystem {
				system, seenSystem = text, true
			}
		case "user":
			if !seenUser {
				user, seenUser = text, true
			}
		case "assistant":
			sent := simscript.Sent{Content: text}
			for _, c := range m.ToolCalls {
				sent.Calls = append(sent.Calls, simscript.Call{Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			hist = append(hist, sent)
		}
	}
	return system, user, hist, nil
}

// callID is a tool call's id, vLLM-shaped ("chatcmpl-tool-" and 32 hex
// digits, random_uuid there) and deterministic here: from the seed, the
// script key, the turn and the call's index.
func (e *engine) callID(key string, turn, i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d|%s|%d|%d", e.o.Seed, key, turn, i))
	return fmt.Sprintf("chatcmpl-tool-%x", sum[:16])
}

// scriptedOutput turns a script's turn into streamed pieces: content
// pieces for a final answer (or unparsed markup), or per call a first
// fragment (id, type, name) then argument fragments of --sim-chunk-tokens
// tokens, cut at maxTokens as any generation is. A Truncated turn ends as
// if the token limit fell inside the last call's arguments.
func (e *engine) scriptedOutput(s *simscript.Script, n, maxTokens int) output {
	em := s.Turns[n].Rendered()
	if len(em.Calls) == 0 {
		return e.generate(em.Content, false, maxTokens)
	}
	out := output{finish: "stop"}
	if em.FinishFull == "length" {
		out.finish = "length"
	}
	for i, c := range em.Calls {
		first := piece{call: &deltaCall{ID: e.callID(s.Key, n, i), Type: "function", Index: i,
			Function: &deltaFunction{Name: c.Name}}, tokens: len(splitTokens(c.Name))}
		if !out.add(first, maxTokens) {
			return out
		}
		toks := splitTokens(c.Arguments)
		for len(toks) > 0 {
			k := min(e.o.ChunkTokens, len(toks))
			args := strings.Join(toks[:k], "")
			pc := piece{call: &deltaCall{Index: i, Function: &deltaFunction{Arguments: &args}}, tokens: k}
			if !out.add(pc, maxTokens) {
				return out
			}
			toks = toks[k:]
		}
	}
	return out
}

// add appends pc unless it would pass maxTokens; then it cuts the piece
// (an arguments fragment) at the limit, marks the output "length" and
// reports false.
func (out *output) add(pc piece, maxTokens int) bool {
	if out.tokens+pc.tokens <= maxTokens {
		out.pieces = append(out.pieces, pc)
		out.tokens += pc.tokens
		out.calls = max(out.calls, pc.call.Index+1)
		return true
	}
	out.finish = "length"
	left := maxTokens - out.tokens
	if left > 0 && pc.call.Function != nil && pc.call.Function.Arguments != nil {
		cut := strings.Join(splitTokens(*pc.call.Function.Arguments)[:left], "")
		pc.call.Function.Arguments = &cut
		pc.tokens = left
		out.pieces = append(out.pieces, pc)
		out.tokens += left
		out.calls = max(out.calls, pc.call.Index+1)
	}
	return false
}

// assemble collects a non-streamed answer's tool calls from the pieces.
func assemble(pieces []piece) []any {
	calls := []any{}
	var cur *wireCall
	for _, pc := range pieces {
		if pc.call == nil {
			continue
		}
		if pc.call.ID != "" {
			cur = &wireCall{ID: pc.call.ID, Type: "function", Function: wireFunction{Name: pc.call.Function.Name}}
			calls = append(calls, cur)
		} else if cur != nil && pc.call.Function != nil && pc.call.Function.Arguments != nil {
			cur.Function.Arguments += *pc.call.Function.Arguments
		}
	}
	return calls
}
