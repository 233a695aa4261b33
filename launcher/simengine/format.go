package simengine

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Request fields that shape the output, as vLLM's ChatCompletionRequest
// declares them (testdata/conformance/vllm-wire.json, "request").

// responseFormat is OpenAI's response_format as vLLM reads it: type
// "text", "json_object" or "json_schema"; a json_schema needs its
// json_schema object, whose name is required and whose schema, when
// given, is a JSON object.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   *string         `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// structuredOutput reads a request's response_format and reports whether
// it asks for JSON (json_object or json_schema: vLLM's structured
// outputs, which force the answer's form); an error is vLLM's 400.
func structuredOutput(raw json.RawMessage) (bool, error) {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return false, nil
	}
	var rf responseFormat
	if err := json.Unmarshal(raw, &rf); err != nil {
		return false, badParam("response_format", "response_format: %v", err)
	}
	switch rf.Type {
	case "text":
		return false, nil
	case "json_object":
		return true, nil
	case "json_schema":
		switch {
		case rf.JSONSchema == nil:
			return false, badParam("response_format", "response_format: type json_schema needs its json_schema object")
		case rf.JSONSchema.Name == nil:
			return false, badParam("response_format", "response_format.json_schema.name: Field required")
		case len(rf.JSONSchema.Schema) > 0 && !isJSONObject(string(rf.JSONSchema.Schema)) && string(rf.JSONSchema.Schema) != "null":
			return false, badParam("response_format", "response_format.json_schema.schema: Input should be a valid dictionary")
		}
		return true, nil
	}
	return false, badParam("response_format", "response_format.type: Input should be 'text', 'json_object' or 'json_schema', got %q", rf.Type)
}

// reasoningEfforts are the values vLLM's reasoning_effort takes.
var reasoningEfforts = []string{"low", "medium", "high"}

// checkReasoningEffort validates reasoning_effort (absent or null is fine).
func checkReasoningEffort(raw json.RawMessage) error {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil || !slices.Contains(reasoningEfforts, v) {
		return badParam("reasoning_effort", "reasoning_effort: Input should be 'low', 'medium' or 'high', got %s", raw)
	}
	return nil
}
