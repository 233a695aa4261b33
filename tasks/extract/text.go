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
// reasoning), then HuatuoGPT-o1's "## Thinking" section (finalResponse).
// It reports an Empty failure when nothing remains.
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
	text, cut := finalResponse(text)
	text = strings.TrimSpace(text)
	if text != "" {
		return text, nil
	}
	if cut {
		return "", &Failure{Kind: Empty, Detail: "only \"## Thinking\", no \"## Final Response\" after it (output cut off?)"}
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

// finalResponse reads HuatuoGPT-o1's layout, "## Thinking\n…\n## Final
// Response\n…": the Final Response section is the answer and the Thinking
// section is reasoning, as a <think> block is (OpenCompass evaluates the
// model with "## Thinking" and "## Final Response" as its think tokens).
// It returns the text after the last "Final Response" heading; a text that
// opens with a "Thinking" heading and has none was cut off while still
// reasoning, and nothing of it is an answer (cut is true).
func finalResponse(text string) (rest string, cut bool) {
	lower := asciiLower(text)
	for end := len(lower); end > 0; {
		i := strings.LastIndex(lower[:end], "final response")
		if i < 0 {
			break
		}
		if lineEnd, ok := headingAround(lower, i, len("final response")); ok {
			return text[lineEnd:], false
		}
		end = i
	}
	first, _, _ := strings.Cut(strings.TrimSpace(lower), "\n")
	if _, ok := headingAround(first, strings.Index(first, "thinking"), len("thinking")); ok {
		return "", true
	}
	return text, false
}

// headingAround reports whether the words lower[i:i+n] are all of a
// markdown heading line, and where that line ends. "## Final Response" and
// "### **Final Response**" are such lines; "The final response is" is
// not. It looks only at the bytes next to the words, so a long line that
// repeats them is read in linear time.
func headingAround(lower string, i, n int) (lineEnd int, ok bool) {
	if i < 0 {
		return 0, false
	}
	start := i
	for start > 0 && strings.IndexByte(" \t*_#", lower[start-1]) >= 0 {
		start--
	}
	if start > 0 && lower[start-1] != '\n' || !strings.Contains(lower[start:i], "#") {
		return 0, false
	}
	end := i + n
	for end < len(lower) {
		if rest, found := strings.CutPrefix(lower[end:], "："); found {
			end = len(lower) - len(rest)
			continue
		}
		if strings.IndexByte(" \t\r*_:", lower[end]) < 0 {
			break
		}
		end++
	}
	return end, end == len(lower) || lower[end] == '\n'
}
