package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/npcorch/npcorch/tasks/clinicare/policy"
	"github.com/npcorch/npcorch/tasks/ehr"
)

// Env is the environment: records, policies, case scopes and dictionaries. Read-only once built.
type Env struct {
	db       *ehr.DB
	policies *policy.Corpus
	scopes   map[string]string // case → subject
	labels   labels
	tools    []tool
	byName   map[string]int
}

// tool is one typed tool: its name, description, channel, input schema and runner.
type tool struct {
	name, description, channel string
	schema                     *jsonschema.Schema
	run                        func(e *Env, subject string, raw []byte, rec *CallRecord) (output, error)
}

// output is a tool's result value and what the log records of it.
type output struct {
	value     any
	tables    []string
	rows      []string
	empty     bool
	truncated bool
}

// define builds a tool from a typed argument struct A: the schema is inferred from A, raw arguments are decoded
// strictly (unknown fields refused), re-encoded canonically into the log, and handed to fn.
func define[A any](name, channel, description string, fn func(e *Env, subject string, a A, rec *CallRecord) (output, error)) tool {
	schema, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", name, err)) // a programming error in a static definition
	}
	return tool{name: name, description: description, channel: channel, schema: schema,
		run: func(e *Env, subject string, raw []byte, rec *CallRecord) (output, error) {
			var a A
			if err := decodeStrict(raw, &a); err != nil {
				rec.Validation = err.Error()
				return output{}, invalidError{err.Error()}
			}
			rec.Arguments, _ = json.Marshal(a)
			rec.Valid = true
			return fn(e, subject, a, rec)
		}}
}

func decodeStrict(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not the tool's JSON object: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("arguments carry data after the JSON object")
	}
	return nil
}

// Tools lists the tool names with their descriptions and input schemas, in a fixed order.
func (e *Env) Tools() []ToolInfo {
	out := make([]ToolInfo, len(e.tools))
	for i, t := range e.tools {
		out[i] = ToolInfo{Name: t.name, Description: t.description, Channel: t.channel, Schema: t.schema}
	}
	return out
}

// ToolInfo describes a tool for a transport.
type ToolInfo struct {
	Name, Description, Channel string
	Schema                     *jsonschema.Schema
}

// scopeError refuses a call for a patient outside the session's scope; what names the id asked for.
type scopeError struct{ what string }

func (e scopeError) Error() string {
	return fmt.Sprintf("%s is outside this session's patient scope; the call is refused and logged as a governance violation", e.what)
}

// invalidError is an argument the tool cannot accept.
type invalidError struct{ msg string }

func (e invalidError) Error() string { return "invalid arguments: " + e.msg }
