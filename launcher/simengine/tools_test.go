package simengine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/npcorch/npcorch/launcher/simscript"
)

const (
	agentSystem = "You are a careful agent. Call tools, then write the report."
	agentUser   = "Case 12: decide whether the order is safe."
)

// agentScript is a small generic script: a lookup with two calls, a call
// cut off by the token limit (vLLM #53269), a call left as markup
// (#46863), a call with invalid JSON arguments, one of an unlisted tool,
// then the report.
func agentScript() simscript.Script {
	return simscript.Script{Key: simscript.Key(agentSystem, agentUser), Name: "oracle/case-12", Turns: []simscript.Turn{
		{Calls: []simscript.Call{{Name: "lookup", Arguments: `{"record":"r-1"}`}, {Name: "policy", Arguments: `{"section":"4.2"}`}}},
		{Calls: []simscript.Call{{Name: "lookup", Arguments: `{"record":"r-2","fields":["dose","route"]}`}}, Defect: simscript.Truncated},
		{Calls: []simscript.Call{{Name: "lookup", Arguments: `{"record":"r-3"}`}}, Defect: simscript.Unparsed},
		{Calls: []simscript.Call{{Name: "lookup", Arguments: `{"record":`}}, Defect: simscript.BadArguments},
		{Calls: []simscript.Call{{Name: "delete_record", Arguments: `{}`}}, Defect: simscript.UnlistedTool},
		{Content: "Verdict: unsafe. Confidence: 0.8. Records: r-1. Policy: 4.2."},
	}}
}

func writeScript(t testing.TB, scripts ...simscript.Script) string {
	t.Helper()
	b, err := json.Marshal(simscript.File{Format: simscript.Format, Scripts: scripts})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "simscript.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var agentTools = []openai.Tool{
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "policy", Parameters: json.RawMessage(`{"type":"object"}`)}},
}

func startAgentEngine(t *testing.T) *engineProc {
	return start(t, "--sim-script", writeScript(t, agentScript()), "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
		"--enable-prompt-tokens-details", "--sim-chunk-tokens", "1")
}

// streamTurn sends one streamed turn through go-openai and accumulates
// its tool-call fragments by index, as an agent loop does.
func streamTurn(t *testing.T, client *openai.Client, msgs []openai.ChatCompletionMessage) (openai.ChatCompletionMessage, openai.FinishReason, *openai.Usage) {
	t.Helper()
	stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "sim-model", Messages: msgs, Tools: agentTools, MaxTokens: 256, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	var finish openai.FinishReason
	var usage *openai.Usage
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage != nil {
			usage = resp.Usage
		}
		for _, c := range resp.Choices {
			msg.Content += c.Delta.Content
			for _, d := range c.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("tool call delta without index: %+v", d)
				}
				if *d.Index == len(msg.ToolCalls) {
					msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{})
				}
				tc := &msg.ToolCalls[*d.Index]
				if d.ID != "" {
					tc.ID, tc.Type = d.ID, d.Type
				}
				tc.Function.Name += d.Function.Name
				tc.Function.Arguments += d.Function.Arguments
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	return msg, finish, usage
}

// TestScriptedAgentThroughGoOpenAI runs the whole script as an agent loop
// would: each turn re-sends the history; go-openai's stream reader
// accumulates the fragments into the scripted calls; defects come out as
// vLLM shows them; cached tokens grow with the history.
func TestScriptedAgentThroughGoOpenAI(t *testing.T) {
	t.Parallel()
	p := startAgentEngine(t)
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = p.base + "/v1"
	client := openai.NewClientWithConfig(cfg)
	s := agentScript()
	msgs := []openai.ChatCompletionMessage{{Role: "system", Content: agentSystem}, {Role: "user", Content: agentUser}}
	ids := map[string]bool{}
	for n, turn := range s.Turns {
		msg, finish, usage := streamTurn(t, client, msgs)
		want := turn.Rendered()
		if msg.Content != want.Content || len(msg.ToolCalls) != len(want.Calls) {
			t.Fatalf("turn %d: got content %q and %d calls, want %q and %d", n, msg.Content, len(msg.ToolCalls), want.Content, len(want.Calls))
		}
		for i, c := range msg.ToolCalls {
			if c.Function.Name != want.Calls[i].Name || c.Function.Arguments != want.Calls[i].Arguments || c.Type != openai.ToolTypeFunction ||
				!strings.HasPrefix(c.ID, "chatcmpl-tool-") || ids[c.ID] {
				t.Fatalf("turn %d call %d = %+v, want %+v with a fresh chatcmpl-tool- id", n, i, c, want.Calls[i])
			}
			ids[c.ID] = true
		}
		if string(finish) != want.Finish {
			t.Fatalf("turn %d: finish %q, want %q", n, finish, want.Finish)
		}
		if usage == nil {
			t.Fatalf("turn %d: no usage", n)
		}
		if n > 0 && (usage.PromptTokensDetails == nil || usage.PromptTokensDetails.CachedTokens == 0) {
			t.Fatalf("turn %d re-sends the history, yet no cached tokens: %+v", n, usage)
		}
		msgs = append(msgs, msg)
		for _, c := range msg.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "tool", ToolCallID: c.ID, Content: `{"ok":true}`})
		}
		if len(msg.ToolCalls) == 0 && n < len(s.Turns)-1 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "user", Content: "No tool call was read; use the tool-call format."})
		}
	}
	// #53269: the streamed arguments of the cut call are not JSON, yet
	// the finish reason says tool_calls.
	if a := s.Turns[1].Rendered().Calls[0].Arguments; json.Valid([]byte(a)) {
		t.Fatalf("truncated arguments %q parse", a)
	}
	// Past the script's end: a loud 400, not an answer.
	body := map[string]any{"model": "sim-model", "messages": msgs, "tools": agentTools}
	if code, b := p.do(http.MethodPost, "/v1/chat/completions", "", body); code != http.StatusBadRequest || !strings.Contains(string(b), "has 6 turns") {
		t.Fatalf("past the end: %d %s", code, b)
	}
}

// TestScriptedNonStreamedShape: message.tool_calls with id, type and
// function; content null; finish_reason "tool_calls", and "length" for
// a truncated call (vLLM's non-streamed path keeps it).
func TestScriptedNonStreamedShape(t *testing.T) {
	t.Parallel()
	p := startAgentEngine(t)
	s := agentScript()
	base := []any{map[string]any{"role": "system", "content": agentSystem}, map[string]any{"role": "user", "content": agentUser}}
	code, b := p.do(http.MethodPost, "/v1/chat/completions", "", map[string]any{"model": "sim-model", "messages": base, "tools": agentTools})
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, b)
	}
	var resp struct {
		Choices []struct {
			Message struct {
				Content   *string           `json:"content"`
				ToolCalls []openai.ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.Content != nil || len(c.Message.ToolCalls) != 2 ||
		c.Message.ToolCalls[1].Function != (openai.FunctionCall{Name: "policy", Arguments: `{"section":"4.2"}`}) || c.Message.ToolCalls[1].Type != "function" {
		t.Fatalf("non-streamed turn 0: %s", b)
	}
	hist := append(base, map[string]any{"role": "assistant", "tool_calls": c.Message.ToolCalls})
	code, b = p.do(http.MethodPost, "/v1/chat/completions", "", map[string]any{"model": "sim-model", "messages": hist, "tools": agentTools})
	if code != http.StatusOK || !strings.Contains(string(b), `"finish_reason":"length"`) ||
		!strings.Contains(string(b), marshalString(s.Turns[1].Rendered().Calls[0].Arguments)) {
		t.Fatalf("non-streamed truncated turn: %d %s", code, b)
	}
}

func marshalString(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestScriptedRequestErrors: a missing script, a history that is not the
// script's, and the tool_choice values vLLM refuses are 400s that say why.
func TestScriptedRequestErrors(t *testing.T) {
	t.Parallel()
	p := startAgentEngine(t)
	sys := map[string]any{"role": "system", "content": agentSystem}
	user := map[string]any{"role": "user", "content": agentUser}
	lookup := map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}}
	cases := []struct {
		name string
		body map[string]any
		want string
	}{
		{"no script", map[string]any{"messages": []any{sys, map[string]any{"role": "user", "content": "another case"}}, "tools": []any{lookup}},
			"no script for key " + simscript.Key(agentSystem, "another case")},
		{"rewritten history", map[string]any{"messages": []any{sys, user, map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "x", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{"record":"r-9"}`}}}}}, "tools": []any{lookup}},
			"turn 0: 1 tool call(s) in the history, the engine made 2"},
		{"empty tools", map[string]any{"messages": []any{sys, user}, "tools": []any{}}, "`tools` must not be an empty array"},
		{"choice without tools", map[string]any{"messages": []any{user}, "tool_choice": "auto"}, "When using `tool_choice`, `tools` must be set."},
		{"bad choice", map[string]any{"messages": []any{sys, user}, "tools": []any{lookup}, "tool_choice": "always"}, "Invalid value for `tool_choice`: always!"},
		{"named unknown", map[string]any{"messages": []any{sys, user}, "tools": []any{lookup}, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "nope"}}},
			"Tool 'nope' has not been passed in `tools`."},
		{"none but script calls", map[string]any{"messages": []any{sys, user}, "tools": []any{lookup}, "tool_choice": "none"}, `tool_choice \"none\"`},
	}
	for _, c := range cases {
		c.body["model"] = "sim-model"
		code, b := p.do(http.MethodPost, "/v1/chat/completions", "", c.body)
		if code != http.StatusBadRequest || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d %s, want 400 with %q", c.name, code, b, c.want)
		}
	}
	plain := start(t, "--sim-script", writeScript(t, agentScript()))
	code, b := plain.do(http.MethodPost, "/v1/chat/completions", "", map[string]any{"model": "sim-model", "messages": []any{sys, user}, "tools": []any{lookup}})
	if code != http.StatusBadRequest || !strings.Contains(string(b), "--enable-auto-tool-choice and --tool-call-parser") {
		t.Errorf("auto without the flags: %d %s", code, b)
	}
}

// TestScriptedCutByMaxTokens: a max_tokens that falls inside a call cuts
// its arguments like any generation; streamed the finish reason still
// says tool_calls (vLLM #53269), not streamed it says length.
func TestScriptedCutByMaxTokens(t *testing.T) {
	t.Parallel()
	p := startAgentEngine(t)
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = p.base + "/v1"
	client := openai.NewClientWithConfig(cfg)
	msgs := []openai.ChatCompletionMessage{{Role: "system", Content: agentSystem}, {Role: "user", Content: agentUser}}
	stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "sim-model", Messages: msgs, Tools: agentTools, MaxTokens: 4, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	var args string
	var finish openai.FinishReason
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.Choices {
			for _, d := range c.Delta.ToolCalls {
				args += d.Function.Arguments
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	stream.Close()
	// "lookup" is 2 tokens of 4 runes; 2 tokens of arguments are left.
	if args != `{"record` || finish != openai.FinishReasonToolCalls {
		t.Fatalf("streamed cut: arguments %q finish %q, want {\"record and tool_calls", args, finish)
	}
	resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "sim-model", Messages: msgs, Tools: agentTools, MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0]; c.FinishReason != openai.FinishReasonLength || len(c.Message.ToolCalls) != 1 ||
		c.Message.ToolCalls[0].Function.Arguments != `{"record` || resp.Usage.CompletionTokens != 4 {
		t.Fatalf("non-streamed cut: %+v usage %+v", c, resp.Usage)
	}
}

// TestScriptedBudgetBeforeTheName: max_tokens 1 ends before the first
// call's name is out: no tool delta, and the stream still ends with
// finish_reason length.
func TestScriptedBudgetBeforeTheName(t *testing.T) {
	t.Parallel()
	p := startAgentEngine(t)
	b, _ := json.Marshal(map[string]any{"model": "sim-model", "max_tokens": 1, "stream": true, "tools": agentTools,
		"messages": []any{map[string]any{"role": "system", "content": agentSystem}, map[string]any{"role": "user", "content": agentUser}}})
	resp, err := http.Post(p.base+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := sseEvents(t, resp.Body)
	all := strings.Join(events, "\n")
	if strings.Contains(all, "tool_calls") || !strings.Contains(events[len(events)-2], `"finish_reason":"length"`) {
		t.Fatalf("events:\n%s", all)
	}
}
