package simengine

import (
	"encoding/json"
	"testing"
)

// TestToolCallsCountInThePrompt: an assistant message's tool calls add to
// the prompt's tokens and its prefix hashes, so a history that differs
// only in a call's arguments is not a cache hit past that message, and
// the KV model counts a long agent history.
func TestToolCallsCountInThePrompt(t *testing.T) {
	e := &engine{o: &options{ImageLimit: 1}}
	msgs := func(args string) []chatMessage {
		return []chatMessage{
			{Role: "user", Content: json.RawMessage(`"decide"`)},
			{Role: "assistant", Content: json.RawMessage(`null`), ToolCalls: []wireCall{{ID: "a", Type: "function", Function: wireFunction{Name: "lookup", Arguments: args}}}},
			{Role: "tool", Content: json.RawMessage(`"{}"`)},
		}
	}
	a, err := e.readPrompt(msgs(`{"record":"r-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.readPrompt(msgs(`{"record":"r-2"}`))
	if a.prefixes[0].hash != b.prefixes[0].hash || a.prefixes[1].hash == b.prefixes[1].hash {
		t.Fatal("prefix hashes ignore the tool calls")
	}
	// "decide" 6 runes, lookup+args 6+16 runes, "{}" 2 runes: ceil(30/4).
	if a.tokens != 8 {
		t.Fatalf("prompt tokens %d, want 8 (the call's name and arguments count)", a.tokens)
	}
}

// TestCutBeforeAnyCallIsNotAToolCall: a budget that ends before the first
// call's name leaves no tool delta, so the stream must not say
// tool_calls (vLLM rewrites only once a tool delta was streamed).
func TestCutBeforeAnyCallIsNotAToolCall(t *testing.T) {
	var out output
	pc := piece{call: &deltaCall{ID: "chatcmpl-tool-x", Type: "function", Function: &deltaFunction{Name: "lookup"}}, tokens: 2}
	if out.add(pc, 1) || out.calls != 0 || out.finish != "length" || len(out.pieces) != 0 {
		t.Fatalf("cut before the name: %+v", out)
	}
}
