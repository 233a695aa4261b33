package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
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
			return nil, fmt.Errorf("%s: %s", name, strings.Join(te.Errors, "; "))
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
