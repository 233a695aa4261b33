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
// type wanted and the type given.
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
	return fmt.Errorf("%s: %w", file, err)
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
	type frame struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []frame
	current := func() []any {
		out := make([]any, 0, len(stack))
		for _, f := range stack {
			if f.array {
				out = append(out, f.index)
			} else {
				out = append(out, f.key)
			}
		}
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return current(), before
		}
		top := len(stack) - 1
		if top >= 0 && !stack[top].array && stack[top].wantKey {
			if key, ok := tok.(string); ok {
				stack[top].key, stack[top].wantKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			if top > 0 && !stack[top-1].array {
				stack[top-1].wantKey = true
			}
			continue
		}
		if top >= 0 && stack[top].array {
			stack[top].index++
		}
		at := current()
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{array: true, index: -1})
		default:
			if top >= 0 && !stack[top].array {
				stack[top].wantKey = true
			}
		}
		if dec.InputOffset() >= offset {
			return at, valueStart(data, before)
		}
	}
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
