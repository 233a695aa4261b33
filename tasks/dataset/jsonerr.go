package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// decodeError places a decoding error of file in data: a syntax error by
// its line, a value of the wrong type by its line and column, its JSON
// path with the ids of the items on it ("guideline[4] (G003).answer"), the
// type wanted and the type given, an unknown field by the line, column
// and path of its first key of that name.
func decodeError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, _ := position(data, se.Offset)
		return fmt.Errorf("%s: line %d: %w", file, line, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path, start := pathAt(data, te.Offset)
		line, col := position(data, start)
		return fmt.Errorf("%s: line %d, column %d: %s: want %s, got %s",
			file, line, col, describePath(data, path), describeType(te.Type), describeValue(te.Value))
	}
	if name, ok := unknownField(err); ok {
		if path, start, ok := keyAt(data, name); ok {
			line, col := position(data, start)
			return fmt.Errorf("%s: line %d, column %d: %s: unknown field %q; check its spelling (docs/dataset.md lists the fields)",
				file, line, col, describePath(data, path), name)
		}
	}
	return fmt.Errorf("%s: %w", file, err)
}

// unknownField is the field name of encoding/json's error for a key that
// no field takes (DisallowUnknownFields), which carries no offset.
func unknownField(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(rest)
	return name, uerr == nil
}

// position is the 1-based line and column of byte offset in data.
func position(data []byte, offset int64) (line, col int) {
	before := data[:min(max(int(offset), 0), len(data))]
	nl := bytes.LastIndexByte(before, '\n')
	return bytes.Count(before, []byte("\n")) + 1, len(before) - nl
}

// pathAt is the path (object keys and array indices) of the value that
// ends at or spans offset in data, which is well-formed JSON up to there,
// and the offset where that value begins.
func pathAt(data []byte, offset int64) (path []any, start int64) {
	w := walker{dec: json.NewDecoder(bytes.NewReader(data))}
	for {
		before := w.dec.InputOffset()
		tok, err := w.next()
		if err != nil {
			return w.current(), before
		}
		if tok.key || tok.closes {
			continue
		}
		if w.dec.InputOffset() >= offset {
			return tok.path, valueStart(data, before)
		}
	}
}

// keyAt is the path of the first object key name in data and the offset
// where it begins; ok is false when data has no such key (up to where it
// stops being JSON).
func keyAt(data []byte, name string) (path []any, start int64, ok bool) {
	w := walker{dec: json.NewDecoder(bytes.NewReader(data))}
	for {
		before := w.dec.InputOffset()
		tok, err := w.next()
		if err != nil {
			return nil, 0, false
		}
		if tok.key && tok.path[len(tok.path)-1] == name {
			return tok.path, valueStart(data, before), true
		}
	}
}

// walker reads JSON token by token and knows where it is: the object keys
// and array indices down to the current value.
type walker struct {
	dec   *json.Decoder
	stack []frame
}

type frame struct {
	array   bool
	index   int
	key     string
	wantKey bool
}

// token is one token read by walker.next: an object key (its path ends
// with the key), the end of an object or list, or a value (or the start
// of one) at path.
type token struct {
	key, closes bool
	path        []any
}

func (w *walker) current() []any {
	out := make([]any, 0, len(w.stack))
	for _, f := range w.stack {
		if f.array {
			out = append(out, f.index)
		} else {
			out = append(out, f.key)
		}
	}
	return out
}

func (w *walker) next() (token, error) {
	tok, err := w.dec.Token()
	if err != nil {
		return token{}, err
	}
	top := len(w.stack) - 1
	if top >= 0 && !w.stack[top].array && w.stack[top].wantKey {
		if key, ok := tok.(string); ok {
			w.stack[top].key, w.stack[top].wantKey = key, false
			return token{key: true, path: w.current()}, nil
		}
	}
	switch tok {
	case json.Delim('}'), json.Delim(']'):
		w.stack = w.stack[:top]
		if top > 0 && !w.stack[top-1].array {
			w.stack[top-1].wantKey = true
		}
		return token{closes: true}, nil
	}
	if top >= 0 && w.stack[top].array {
		w.stack[top].index++
	}
	at := w.current()
	switch tok {
	case json.Delim('{'):
		w.stack = append(w.stack, frame{wantKey: true})
	case json.Delim('['):
		w.stack = append(w.stack, frame{array: true, index: -1})
	default:
		if top >= 0 && !w.stack[top].array {
			w.stack[top].wantKey = true
		}
	}
	return token{path: at}, nil
}

// valueStart skips the separators between the previous token, which ends
// at off, and the next value.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}

// describePath writes path as the validators name places: each item
// with its id, "guideline[4] (G003).answer".
func describePath(data []byte, path []any) string {
	var doc any
	_ = json.NewDecoder(bytes.NewReader(data)).Decode(&doc) // partial is fine: ids are best effort
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(p) + "]")
			if arr, ok := doc.([]any); ok && p < len(arr) {
				doc = arr[p]
				if id := itemID(doc); id != "" {
					b.WriteString(" (" + id + ")")
				}
			} else {
				doc = nil
			}
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
			obj, _ := doc.(map[string]any)
			doc = obj[p]
		}
	}
	if b.Len() == 0 {
		return "the top level"
	}
	return b.String()
}

// itemID is an object's id, or its patient for items named by patient.
func itemID(v any) string {
	obj, _ := v.(map[string]any)
	for _, k := range []string{"id", "patient"} {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// describeType says in words what a value of Go type t is written as.
func describeType(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		switch t.Elem().Kind() {
		case reflect.String:
			return `a list of strings, like ["E"]`
		case reflect.Struct, reflect.Map:
			return "a list of objects [{...}, ...]"
		}
		return "a list [...]"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number of 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object {...}"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return t.String()
}

// describeValue names the JSON value encoding/json reports ("string",
// "number -1.5", "array").
func describeValue(v string) string {
	switch {
	case v == "string":
		return "a string"
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case v == "number":
		return "a number"
	}
	return v
}
