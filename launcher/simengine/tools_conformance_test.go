package simengine_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/launcher/simscript"
)

// toolsWire is testdata/conformance/vllm-tools.json: how vLLM puts tool
// calls on the wire, by its source and bug reports.
type toolsWire struct {
	DeltaToolCall struct {
		KeyOrder      []string `json:"key_order"`
		FirstFragment struct {
			Required         []string `json:"required"`
			Type             string   `json:"type"`
			FunctionRequired []string `json:"function_required"`
		} `json:"first_fragment"`
		LaterFragment struct {
			Required         []string `json:"required"`
			FunctionRequired []string `json:"function_required"`
		} `json:"later_fragment"`
		IDPrefix string `json:"id_prefix"`
	} `json:"delta_tool_call"`
	ToolCall struct {
		KeyOrder     []string `json:"key_order"`
		FunctionKeys []string `json:"function_keys"`
	} `json:"tool_call"`
	FinishReason struct {
		StreamAfterToolDelta string `json:"stream_after_tool_delta"`
		FullEngineStop       string `json:"full_engine_stop"`
		FullEngineLength     string `json:"full_engine_length"`
	} `json:"finish_reason"`
	ToolChoice struct {
		Errors map[string]string `json:"errors"`
	} `json:"tool_choice"`
	Unparsed struct {
		ContentExample string `json:"content_example"`
		FinishReason   string `json:"finish_reason"`
	} `json:"unparsed_markup"`
}

func loadToolsWire(t *testing.T) toolsWire {
	t.Helper()
	b, err := os.ReadFile("../../testdata/conformance/vllm-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var w toolsWire
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// orderedKeys returns an object's keys in the order they appear.
func orderedKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return ks
}

func sameStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// TestToolCallStreamMatchesVLLM: each tool-call delta has the keys
// DeltaToolCall sets (first fragment id, type, index, function.name;
// later ones index and function.arguments, in vLLM's order), and the
// last chunk says the table's finish reason — also for a call cut off by
// the token limit (#53269).
func TestToolCallStreamMatchesVLLM(t *testing.T) {
	t.Parallel()
	w := loadToolsWire(t)
	p := startAgentEngine(t)
	s := agentScript()
	hist := []any{map[string]any{"role": "system", "content": agentSystem}, map[string]any{"role": "user", "content": agentUser}}
	for n := range 3 {
		b, _ := json.Marshal(map[string]any{"model": "sim-model", "messages": hist, "tools": agentTools, "stream": true})
		resp, err := http.Post(p.base+"/v1/chat/completions", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		events := sseEvents(t, resp.Body)
		resp.Body.Close()
		var finish string
		for _, ev := range events[:len(events)-1] {
			var c struct {
				Choices []struct {
					Delta        map[string]json.RawMessage `json:"delta"`
					FinishReason *string                    `json:"finish_reason"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(ev), &c); err != nil {
				t.Fatal(err)
			}
			if len(c.Choices) == 0 {
				continue
			}
			if f := c.Choices[0].FinishReason; f != nil {
				finish = *f
			}
			raw, ok := c.Choices[0].Delta["tool_calls"]
			if !ok {
				continue
			}
			var calls []json.RawMessage
			if err := json.Unmarshal(raw, &calls); err != nil || len(calls) != 1 {
				t.Fatalf("turn %d: tool_calls %s", n, raw)
			}
			var d struct {
				ID, Type string
				Function json.RawMessage
			}
			_ = json.Unmarshal(calls[0], &d)
			keys := orderedKeys(t, calls[0])
			fn := orderedKeys(t, d.Function)
			if d.ID != "" {
				if !sameStrings(keys, w.DeltaToolCall.FirstFragment.Required) || d.Type != w.DeltaToolCall.FirstFragment.Type ||
					!sameStrings(fn, w.DeltaToolCall.FirstFragment.FunctionRequired) || !strings.HasPrefix(d.ID, w.DeltaToolCall.IDPrefix) {
					t.Fatalf("turn %d first fragment %s, want keys %v and function %v", n, calls[0], w.DeltaToolCall.FirstFragment.Required, w.DeltaToolCall.FirstFragment.FunctionRequired)
				}
			} else if !sameStrings(keys, w.DeltaToolCall.LaterFragment.Required) || !sameStrings(fn, w.DeltaToolCall.LaterFragment.FunctionRequired) {
				t.Fatalf("turn %d later fragment %s", n, calls[0])
			}
		}
		em := s.Turns[n].Rendered()
		want := w.FinishReason.StreamAfterToolDelta
		if len(em.Calls) == 0 {
			want = w.Unparsed.FinishReason
		}
		if finish != want {
			t.Fatalf("turn %d: finish_reason %q, want %q", n, finish, want)
		}
		hist = append(hist, assistantMessage(em))
	}
	if got := s.Turns[2].Rendered().Content; got != w.Unparsed.ContentExample {
		t.Fatalf("unparsed markup %q, want the table's %q", got, w.Unparsed.ContentExample)
	}
}

// assistantMessage is the history entry an agent sends back for a turn.
func assistantMessage(em simscript.Emitted) map[string]any {
	m := map[string]any{"role": "assistant", "content": em.Content}
	var calls []any
	for _, c := range em.Calls {
		calls = append(calls, map[string]any{"id": "x", "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	if calls != nil {
		m["tool_calls"] = calls
		m["content"] = nil
	}
	return m
}

// TestToolCallFullAnswerMatchesVLLM: message.tool_calls entries have
// ToolCall's keys in order; finish_reason is tool_calls for an engine
// stop and length for a cut call; tool_choice errors say vLLM's words.
func TestToolCallFullAnswerMatchesVLLM(t *testing.T) {
	t.Parallel()
	w := loadToolsWire(t)
	p := startAgentEngine(t)
	s := agentScript()
	hist := []any{map[string]any{"role": "system", "content": agentSystem}, map[string]any{"role": "user", "content": agentUser}}
	for n, want := range []string{w.FinishReason.FullEngineStop, w.FinishReason.FullEngineLength} {
		code, b := p.do(http.MethodPost, "/v1/chat/completions", "", map[string]any{"model": "sim-model", "messages": hist, "tools": agentTools})
		var r struct {
			Choices []struct {
				Message struct {
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(b, &r); code != http.StatusOK || err != nil || len(r.Choices) != 1 {
			t.Fatalf("turn %d: %d %s", n, code, b)
		}
		if r.Choices[0].FinishReason != want {
			t.Fatalf("turn %d: finish_reason %q, want %q", n, r.Choices[0].FinishReason, want)
		}
		for _, c := range r.Choices[0].Message.ToolCalls {
			var tc struct{ Function json.RawMessage }
			_ = json.Unmarshal(c, &tc)
			if !sameStrings(orderedKeys(t, c), w.ToolCall.KeyOrder) || !sameStrings(orderedKeys(t, tc.Function), w.ToolCall.FunctionKeys) {
				t.Fatalf("turn %d tool call %s, want keys %v / %v", n, c, w.ToolCall.KeyOrder, w.ToolCall.FunctionKeys)
			}
		}
		hist = append(hist, assistantMessage(s.Turns[n].Rendered()))
	}
	code, b := p.do(http.MethodPost, "/v1/chat/completions", "", map[string]any{"model": "sim-model", "messages": hist[:2], "tool_choice": "auto"})
	if code != http.StatusBadRequest || !strings.Contains(string(b), w.ToolChoice.Errors["choice_without_tools"]) {
		t.Fatalf("tool_choice without tools: %d %s", code, b)
	}
}
