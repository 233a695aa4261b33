package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// boxedContents returns the contents of every \boxed{...} (and \fbox{...})
// in order, braces matched. An unclosed box is ignored.
func boxedContents(text string) []string {
	var out []string
	for _, cmd := range []string{`\boxed`, `\fbox`} {
		rest := text
		for {
			i := strings.Index(rest, cmd)
			if i < 0 {
				break
			}
			rest = rest[i+len(cmd):]
			body := strings.TrimLeft(rest, " ")
			if !strings.HasPrefix(body, "{") {
				continue
			}
			depth := 0
			end := -1
			for j, r := range body {
				switch r {
				case '{':
					depth++
				case '}':
					depth--
				}
				if depth == 0 {
					end = j
					break
				}
			}
			if end < 0 {
				break
			}
			out = append(out, stripTeX(body[1:end]))
			rest = body[end+1:]
		}
	}
	return out
}

// stripTeX removes text-formatting commands and braces: \text{A} → A.
func stripTeX(s string) string {
	for _, cmd := range []string{`\text`, `\textbf`, `\mathrm`, `\mathbf`, `\mathit`, `\textit`, `\rm`, `\bf`} {
		s = strings.ReplaceAll(s, cmd+"{", "{")
	}
	s = strings.NewReplacer("{", "", "}", "", "$", "", `\,`, "", `\ `, " ", `\_`, "_", `\+`, "+").Replace(s)
	return strings.TrimSpace(s)
}

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
