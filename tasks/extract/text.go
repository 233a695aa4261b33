package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// finalText removes reasoning a client left in the text: everything up to
// the last "</think>" (a chat template may open the block in the prompt),
// then an unclosed "<think>" and all after it (output cut off while still
// reasoning). It reports an Empty failure when nothing remains.
func finalText(raw string) (string, *Failure) {
	text := raw
	lower := asciiLower(text) // same byte offsets as text, unlike strings.ToLower
	if i := strings.LastIndex(lower, "</think>"); i >= 0 {
		text = text[i+len("</think>"):]
		lower = lower[i+len("</think>"):]
	}
	if i := strings.Index(lower, "<think>"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSpace(text)
	if text != "" {
		return text, nil
	}
	if strings.TrimSpace(raw) == "" {
		return "", &Failure{Kind: Empty, Detail: "the model returned no text"}
	}
	return "", &Failure{Kind: Empty, Detail: "only reasoning, no final answer after it (output cut off?)"}
}

// asciiLower lowers ASCII letters only, so that byte offsets found in the
// result are valid in s whatever s contains.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// box is one \boxed{...} (or \fbox{...}): its span in the text and its
// contents with TeX formatting removed.
type box struct {
	start, end int
	contents   string
}

// boxes returns every \boxed{...} and \fbox{...} of text in text order,
// braces matched. An unclosed box is ignored.
func boxes(text string) []box {
	var out []box
	for _, cmd := range []string{`\boxed`, `\fbox`} {
		for from := 0; ; {
			i := strings.Index(text[from:], cmd)
			if i < 0 {
				break
			}
			start := from + i
			from = start + len(cmd)
			open := from + len(text[from:]) - len(strings.TrimLeft(text[from:], " "))
			if open >= len(text) || text[open] != '{' {
				continue
			}
			end := matchBrace(text, open)
			if end < 0 {
				break
			}
			out = append(out, box{start: start, end: end + 1, contents: stripTeX(text[open+1 : end])})
			from = end + 1
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// matchBrace returns the index of the '}' closing the '{' at text[open], or
// -1 when it is never closed.
func matchBrace(text string, open int) int {
	depth := 0
	for j := open; j < len(text); j++ {
		switch text[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// boxedContents returns the contents of every box in text order.
func boxedContents(text string) []string {
	var out []string
	for _, b := range boxes(text) {
		out = append(out, b.contents)
	}
	return out
}

// unbox reads each box of s as its contents: "$\boxed{B}$" → "B".
func unbox(s string) string {
	bs := boxes(s)
	if len(bs) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, bx := range bs {
		if bx.start < at {
			continue // a box inside a box
		}
		b.WriteString(s[at:bx.start])
		b.WriteString(bx.contents)
		at = bx.end
	}
	b.WriteString(s[at:])
	return strings.Trim(b.String(), "$ ")
}

// stripTeX removes text-formatting commands and braces: \text{A} → A.
func stripTeX(s string) string {
	for _, cmd := range []string{`\text`, `\textbf`, `\mathrm`, `\mathbf`, `\mathit`, `\textit`, `\rm`, `\bf`} {
		s = strings.ReplaceAll(s, cmd+"{", "{")
	}
	return strings.TrimSpace(texMarks.Replace(s))
}

// texMarks removes braces and dollars and reads TeX escapes; like the
// package's regexps it is built once and never changes.
var texMarks = strings.NewReplacer("{", "", "}", "", "$", "", `\,`, "", `\ `, " ", `\_`, "_", `\+`, "+")

// member is one key/value pair of a JSON object, in answer order.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object with its members in order and duplicates kept, so
// that {"t_stage":"T2","t_stage":"T3"} can be seen as conflicting.
type object []member

// UnmarshalJSON implements json.Unmarshaler.
func (o *object) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		*o = append(*o, member{key: key, value: raw})
	}
	return nil
}

// lookup returns the values of every member whose key matches one of names,
// ignoring case.
func (o object) lookup(names ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range o {
		for _, n := range names {
			if strings.EqualFold(strings.TrimSpace(m.key), n) {
				out = append(out, m.value)
				break
			}
		}
	}
	return out
}

// canonicalJSON re-encodes raw with sorted keys and no spaces, so that two
// answers can be compared for equality.
func canonicalJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}
