package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeFile reads name from fsys and decodes it strictly into v: unknown
// fields are errors, and every error names the file and the line.
func decodeFile(fsys fs.FS, name string, v any) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	_, err = decodeBytes(name, data, v)
	return err
}

// decodeBytes decodes data strictly into v and also returns the document's
// node tree, so that later checks can name the line of a field.
func decodeBytes(name string, data []byte, v any) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, trimYAML(err))
	}
	if len(data) == 0 || root.Kind == 0 {
		return nil, fmt.Errorf("%s: the file is empty", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, locator{file: name, root: &root}.decodeError("", err)
		}
		return nil, fmt.Errorf("%s: %w", name, trimYAML(err))
	}
	return &root, nil
}

func trimYAML(err error) error {
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

// fieldError is a validation error that names the file, line and field.
type fieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *fieldError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: field %s: %s", e.File, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: field %s: %s", e.File, e.Field, e.Msg)
}

// locator finds the line of a dotted field path ("models[3].engine.kind")
// in a decoded document.
type locator struct {
	file string
	root *yaml.Node
}

func (l locator) errorf(path, format string, args ...any) error {
	return &fieldError{File: l.file, Line: l.line(path), Field: path, Msg: fmt.Sprintf(format, args...)}
}

// decodeError is the error of decoding the node at path: a wrong-typed
// value names its own field (typeError), anything else the path.
func (l locator) decodeError(path string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || l.root == nil {
		return l.errorf(path, "%v", err)
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = typeError(l.file, l.root, m).Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// line returns the line of the deepest node the path reaches (0 if none).
func (l locator) line(path string) int {
	if l.root == nil {
		return 0
	}
	n := l.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, part := range splitPath(path) {
		next := child(n, part)
		if next == nil {
			break
		}
		n = next
		line = n.Line
	}
	return line
}

// has reports whether the document writes the top-level field name.
func (l locator) has(name string) bool {
	if l.root == nil {
		return false
	}
	n := l.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return child(n, name) != nil
}

func splitPath(path string) []string {
	var parts []string
	for _, seg := range strings.Split(path, ".") {
		for {
			i := strings.IndexByte(seg, '[')
			if i < 0 {
				parts = append(parts, seg)
				break
			}
			if i > 0 {
				parts = append(parts, seg[:i])
			}
			j := strings.IndexByte(seg, ']')
			if j < i {
				parts = append(parts, seg)
				break
			}
			parts = append(parts, seg[i:j+1])
			seg = seg[j+1:]
			if seg == "" {
				break
			}
		}
	}
	return parts
}

func child(n *yaml.Node, part string) *yaml.Node {
	if strings.HasPrefix(part, "[") {
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return nil
		}
		return n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == part {
			// Point at the key: that is the line a user looks for.
			v := n.Content[i+1]
			if v.Kind == yaml.ScalarNode {
				return v
			}
			cp := *v
			cp.Line = n.Content[i].Line
			return &cp
		}
	}
	return nil
}

// checkKnownFields reports the first mapping key under n that the Go type t
// does not declare, with its line. Node.Decode is not strict, so overrides
// decoded from a node are checked with this first.
func checkKnownFields(file string, n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fields[name] = f.Type
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			sub := key.Value
			if path != "" {
				sub = path + "." + key.Value
			}
			ft, ok := fields[key.Value]
			if !ok {
				return &fieldError{File: file, Line: key.Line, Field: sub,
					Msg: fmt.Sprintf("unknown field; known fields: %s", strings.Join(sortedKeys(fields), ", "))}
			}
			if err := checkKnownFields(file, n.Content[i+1], ft, sub); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkKnownFields(file, n.Content[i+1], t.Elem(), path+"."+n.Content[i].Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// typeMismatch is yaml.v3's message for a value of the wrong type:
// "line 4: cannot unmarshal !!int `30` into time.Duration" (no value for a
// list or a mapping; a long value is cut to 7 characters and "...").
var typeMismatch = regexp.MustCompile("^line ([0-9]+): cannot unmarshal !!([a-z]+)(?: `(.*)`)? into (.+)$")

// typeError turns yaml.v3's message about a wrong-typed value into an
// error that names the field, its line and what to write instead; a
// message it cannot place keeps yaml.v3's words.
func typeError(file string, root *yaml.Node, msg string) error {
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: %s", file, msg)
	}
	line, _ := strconv.Atoi(m[1])
	tag, value, goType := m[2], m[3], m[4]
	var found *valueAt
	walkValues(root, "", func(v valueAt) {
		if v.node.Line == line && v.node.ShortTag() == "!!"+tag && sameValue(v.node, value) {
			found = &v // the deepest: a parent comes before its fields
		}
	})
	if found == nil {
		return fmt.Errorf("%s: %s", file, msg)
	}
	return &fieldError{File: file, Line: found.line, Field: found.path, Msg: typeWant(tag, found.node.Value, goType)}
}

// sameValue reports whether n is the value yaml.v3 quoted (cut or not).
func sameValue(n *yaml.Node, quoted string) bool {
	if n.Kind != yaml.ScalarNode {
		return quoted == ""
	}
	if cut, ok := strings.CutSuffix(quoted, "..."); ok && len(n.Value) > 10 {
		return strings.HasPrefix(n.Value, cut)
	}
	return n.Value == quoted
}

// typeWant says what a field of goType wants instead of a !!tag value.
func typeWant(tag, value, goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case goType == "time.Duration" && (tag == "int" || tag == "float"):
		return fmt.Sprintf("a bare number is not a duration; write %ss", value)
	case goType == "time.Duration":
		return fmt.Sprintf("%q is not a duration; write one such as 30s, 10m or 1h30m", value)
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "want a whole number"
	case strings.HasPrefix(goType, "float"):
		return "want a number"
	case goType == "bool":
		return "want true or false"
	case goType == "string":
		return "want a text; quote it if it looks like something else"
	case strings.HasPrefix(goType, "[]") && tag != "map" && tag != "seq" && value != "":
		return fmt.Sprintf("want a list, like [%s]", value)
	case strings.HasPrefix(goType, "[]"):
		return "want a list, like [a, b]"
	case goType == "configs.DatasetPaths":
		return "want {raw: DIR, prepared: DIR}"
	}
	return fmt.Sprintf("want a mapping of the fields of %s, not a !!%s", goType, tag)
}

// valueAt is a value in a document, with its field path and the line to
// name (its key's).
type valueAt struct {
	path string
	line int
	node *yaml.Node
}

// walkValues calls fn for every mapping value and list item under n, in
// document order, parents before their fields.
func walkValues(n *yaml.Node, path string, fn func(valueAt)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkValues(c, path, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			sub := n.Content[i].Value
			if path != "" {
				sub = path + "." + sub
			}
			fn(valueAt{path: sub, line: n.Content[i].Line, node: n.Content[i+1]})
			walkValues(n.Content[i+1], sub, fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			sub := fmt.Sprintf("%s[%d]", path, i)
			fn(valueAt{path: sub, line: c.Line, node: c})
			walkValues(c, sub, fn)
		}
	}
}
