package simscript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// Format is the format tag of a script file.
const Format = "npcorch-simscript/1"

// Defect markers: what a turn does wrong on the wire, as real engines and
// models do. An empty Defect is a well-formed turn.
const (
	// Truncated is a tool call cut off by the token limit: the engine emits
	// the first half (in runes) of the last call's arguments; streamed, the
	// finish_reason is rewritten to "tool_calls" (vLLM #53269), not
	// streamed it stays "length".
	Truncated = "truncated"
	// Unparsed is a call the engine's parser failed to read: the calls are
	// emitted as hermes-style markup in content
	// (<tool_call>\n{"name": …, "arguments": …}\n</tool_call>), no
	// tool_calls, finish_reason "stop" (vLLM #46863 and its kin).
	Unparsed = "unparsed"
	// BadArguments marks a call whose arguments are not valid JSON, emitted
	// as written (a malformed call the loop returns as a tool error).
	BadArguments = "bad-arguments"
	// UnlistedTool marks a call of a tool the request did not list.
	UnlistedTool = "unlisted-tool"
)

// File is a script file: {"format":"npcorch-simscript/1","scripts":[…]}.
type File struct {
	Format  string   `json:"format"`
	Scripts []Script `json:"scripts"`
}

// Script is one conversation: the assistant turns of one (system, case).
type Script struct {
	// Key is Key(system prompt, first user message) of the requests it
	// answers.
	Key string `json:"key"`
	// Name says whose script it is (system and case), for error messages.
	Name  string `json:"name"`
	Turns []Turn `json:"turns"`
}

// Turn is one assistant message: Calls, or else Content (the final report).
type Turn struct {
	Calls   []Call `json:"calls,omitempty"`
	Content string `json:"content,omitempty"`
	// Defect is "" or one of Truncated, Unparsed, BadArguments, UnlistedTool.
	Defect string `json:"defect,omitempty"`
}

// Call is one tool call exactly as the model emits it.
type Call struct {
	Name string `json:"name"`
	// Arguments is the raw argument string (JSON unless BadArguments).
	Arguments string `json:"arguments"`
}

// Key identifies a conversation: the lowercase hex SHA-256 of
// "system\x00" + system + "\x00user\x00" + firstUser. Both are the text of
// the messages (a message of parts: its text parts joined by "\n").
func Key(system, firstUser string) string {
	sum := sha256.Sum256([]byte("system\x00" + system + "\x00user\x00" + firstUser))
	return hex.EncodeToString(sum[:])
}

// Load reads and checks a script file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim script: %w (pass the file npcorch wrote with --sim-script)", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("sim script %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes and checks a script file's bytes.
func Parse(data []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a valid %s file: %w", Format, err)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("format is %q, want %q (regenerate it with this npcorch)", f.Format, Format)
	}
	seen := map[string]string{}
	for i := range f.Scripts {
		s := &f.Scripts[i]
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("script %d (%s): %w", i, s.Name, err)
		}
		if other, dup := seen[s.Key]; dup {
			return nil, fmt.Errorf("scripts %s and %s share key %s", other, s.Name, s.Key)
		}
		seen[s.Key] = s.Name
	}
	return &f, nil
}

func (s *Script) check() error {
	if len(s.Key) != 64 || strings.Trim(s.Key, "0123456789abcdef") != "" {
		return fmt.Errorf("key %q is not a lowercase hex sha256 (use simscript.Key)", s.Key)
	}
	if len(s.Turns) == 0 {
		return fmt.Errorf("no turns")
	}
	for n, t := range s.Turns {
		if err := t.check(); err != nil {
			return fmt.Errorf("turn %d: %w", n, err)
		}
	}
	return nil
}

func (t Turn) check() error {
	if (len(t.Calls) == 0) == (t.Content == "") {
		return fmt.Errorf("a turn has either calls or content, not both nor neither")
	}
	switch t.Defect {
	case "", Unparsed, Truncated, UnlistedTool:
	case BadArguments:
		for _, c := range t.Calls {
			if !json.Valid([]byte(c.Arguments)) {
				return nil
			}
		}
		return fmt.Errorf("marked %s but every call's arguments are valid JSON", BadArguments)
	default:
		return fmt.Errorf("unknown defect %q (choose from %s, %s, %s, %s)", t.Defect, Truncated, Unparsed, BadArguments, UnlistedTool)
	}
	if t.Defect != "" && len(t.Calls) == 0 {
		return fmt.Errorf("defect %s needs calls", t.Defect)
	}
	for i, c := range t.Calls {
		if c.Name == "" {
			return fmt.Errorf("call %d has no name", i)
		}
		if t.Defect != BadArguments && !json.Valid([]byte(c.Arguments)) {
			return fmt.Errorf("call %d (%s): arguments %q are not valid JSON; mark the turn %s if that is meant", i, c.Name, c.Arguments, BadArguments)
		}
	}
	return nil
}

// Find returns the script with the given key, or nil.
func (f *File) Find(key string) *Script {
	if f == nil {
		return nil
	}
	for i := range f.Scripts {
		if f.Scripts[i].Key == key {
			return &f.Scripts[i]
		}
	}
	return nil
}

// Emitted is what the engine puts on the wire for a turn: content, tool
// calls (with their possibly cut arguments) and the finish reasons.
type Emitted struct {
	Content string
	Calls   []Call
	// Finish is the streamed finish_reason, FinishFull the non-streamed one.
	Finish, FinishFull string
}

// Rendered returns what the engine emits for t, its defect applied.
func (t Turn) Rendered() Emitted {
	switch {
	case len(t.Calls) == 0:
		return Emitted{Content: t.Content, Finish: "stop", FinishFull: "stop"}
	case t.Defect == Unparsed:
		return Emitted{Content: markup(t.Calls), Finish: "stop", FinishFull: "stop"}
	case t.Defect == Truncated:
		calls := append([]Call(nil), t.Calls...)
		last := &calls[len(calls)-1]
		last.Arguments = halve(last.Arguments)
		return Emitted{Calls: calls, Finish: "tool_calls", FinishFull: "length"}
	}
	return Emitted{Calls: t.Calls, Finish: "tool_calls", FinishFull: "tool_calls"}
}

// markup writes calls as a hermes-style model writes them before parsing.
func markup(calls []Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteString("\n")
		}
		name, _ := json.Marshal(c.Name)
		fmt.Fprintf(&b, "<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", name, c.Arguments)
	}
	return b.String()
}

// halve keeps the first half of s's runes (at least one fewer than all).
func halve(s string) string {
	n := utf8.RuneCountInString(s)
	return string([]rune(s)[:n/2])
}
