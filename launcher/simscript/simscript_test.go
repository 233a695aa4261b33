package simscript

import (
	"encoding/json"
	"strings"
	"testing"
)

// example is a tiny generic script: one lookup, a truncated call, a call
// left as markup, then the report.
func example() *Script {
	return &Script{Key: Key("You are an agent.", "Case 1"), Name: "oracle/case-1", Turns: []Turn{
		{Calls: []Call{{Name: "lookup", Arguments: `{"id":"r1"}`}}},
		{Calls: []Call{{Name: "lookup", Arguments: `{"id":"r2","note":"abcdefgh"}`}}, Defect: Truncated},
		{Calls: []Call{{Name: "lookup", Arguments: `{"id":"r3"}`}}, Defect: Unparsed},
		{Content: "Verdict: yes"},
	}}
}

func TestKeyIsStableAndSeparatesFields(t *testing.T) {
	if Key("ab", "c") == Key("a", "bc") {
		t.Fatal("key must separate system from user")
	}
	if got := Key("s", "u"); len(got) != 64 || got != Key("s", "u") {
		t.Fatalf("key %q", got)
	}
}

func TestParseRejectsBadScripts(t *testing.T) {
	key := Key("s", "u")
	cases := map[string]string{
		"format":      `{"format":"x","scripts":[]}`,
		"no turns":    `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[]}]}`,
		"bad key":     `{"format":"npcorch-simscript/1","scripts":[{"key":"k","name":"a","turns":[{"content":"x"}]}]}`,
		"both":        `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[{"content":"x","calls":[{"name":"f","arguments":"{}"}]}]}]}`,
		"bad json":    `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[{"calls":[{"name":"f","arguments":"{"}]}]}]}`,
		"marked ok":   `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[{"defect":"bad-arguments","calls":[{"name":"f","arguments":"{}"}]}]}]}`,
		"defect":      `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[{"defect":"odd","calls":[{"name":"f","arguments":"{}"}]}]}]}`,
		"duplicate":   `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[{"content":"x"}]},{"key":"` + key + `","name":"b","turns":[{"content":"x"}]}]}`,
		"unknown key": `{"format":"npcorch-simscript/1","scripts":[],"extra":1}`,
	}
	for name, data := range cases {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: accepted %s", name, data)
		}
	}
	ok := `{"format":"npcorch-simscript/1","scripts":[{"key":"` + key + `","name":"a","turns":[{"defect":"bad-arguments","calls":[{"name":"f","arguments":"{\"a\":"}]},{"content":"done"}]}]}`
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatal(err)
	}
}

func TestRenderedDefects(t *testing.T) {
	s := example()
	tr := s.Turns[1].Rendered()
	// vLLM #53269: streamed finish_reason is rewritten to tool_calls; the
	// non-streamed path keeps "length"; the arguments are cut JSON.
	if tr.Finish != "tool_calls" || tr.FinishFull != "length" {
		t.Fatalf("truncated finishes %q/%q", tr.Finish, tr.FinishFull)
	}
	if a := tr.Calls[0].Arguments; json.Valid([]byte(a)) || !strings.HasPrefix(s.Turns[1].Calls[0].Arguments, a) {
		t.Fatalf("truncated arguments %q", a)
	}
	if s.Turns[1].Calls[0].Arguments != `{"id":"r2","note":"abcdefgh"}` {
		t.Fatal("Rendered changed the script")
	}
	un := s.Turns[2].Rendered()
	if len(un.Calls) != 0 || un.Content != "<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"id\":\"r3\"}}\n</tool_call>" || un.Finish != "stop" {
		t.Fatalf("unparsed %+v", un)
	}
}

func TestCheckFindsTheTurnAndNamesMismatches(t *testing.T) {
	s := example()
	var hist []Sent
	for i := range s.Turns[:3] {
		n, err := s.Check(hist)
		if err != nil || n != i {
			t.Fatalf("turn %d: n=%d err=%v", i, n, err)
		}
		e := s.Turns[i].Rendered()
		hist = append(hist, Sent{Content: e.Content, Calls: e.Calls})
	}
	bad := append([]Sent(nil), hist...)
	bad[1] = Sent{Calls: []Call{{Name: "lookup", Arguments: s.Turns[1].Calls[0].Arguments}}} // the harness "repaired" the cut call
	if _, err := s.Check(bad); err == nil || !strings.Contains(err.Error(), "turn 1 call 0") {
		t.Fatalf("repaired history accepted: %v", err)
	}
	full := append(hist, Sent{Content: "Verdict: yes"})
	if _, err := s.Check(full); err == nil || !strings.Contains(err.Error(), "has 4 turns") {
		t.Fatalf("history past the script: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"format":"npcorch-simscript/1","scripts":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, s := range file.Scripts {
			for _, turn := range s.Turns {
				_ = turn.Rendered()
			}
			_, _ = s.Check(nil)
		}
	})
}
