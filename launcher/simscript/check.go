package simscript

import "fmt"

// Sent is one assistant message of a request's history, as the harness
// sent it back.
type Sent struct {
	Content string
	Calls   []Call
}

// Check verifies that the assistant messages of a request's history are
// the first len(history) turns of s as the engine emitted them, and
// returns the turn to answer next. An error names the first mismatch: a
// harness that rewrites what the model said is a bug to report loudly.
func (s *Script) Check(history []Sent) (int, error) {
	n := len(history)
	if n >= len(s.Turns) {
		return 0, fmt.Errorf("script %s (key %s) has %d turns and the history already holds %d assistant messages", s.Name, s.Key, len(s.Turns), n)
	}
	for i, got := range history {
		want := s.Turns[i].Rendered()
		if got.Content != want.Content {
			return 0, fmt.Errorf("script %s turn %d: assistant content %q in the history, the engine said %q", s.Name, i, clip(got.Content), clip(want.Content))
		}
		if len(got.Calls) != len(want.Calls) {
			return 0, fmt.Errorf("script %s turn %d: %d tool call(s) in the history, the engine made %d", s.Name, i, len(got.Calls), len(want.Calls))
		}
		for j, c := range got.Calls {
			if c != want.Calls[j] {
				return 0, fmt.Errorf("script %s turn %d call %d: history has %s(%q), the engine called %s(%q)", s.Name, i, j, c.Name, clip(c.Arguments), want.Calls[j].Name, clip(want.Calls[j].Arguments))
			}
		}
	}
	return n, nil
}

func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
