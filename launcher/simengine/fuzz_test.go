package simengine

import (
	"strings"
	"testing"
)

// FuzzParseOptions: any command line gives options within their ranges or
// an argparse-style error, never a panic.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"serve m --host 127.0.0.1 --port 8000 --api-key k --max-num-seqs 4",
		`m --limit-mm-per-prompt {"image":{"count":80,"width":512},"video":0} --sim-policy right=0.5 --sim-fault crash-after=3,hang-after=9`,
		"m --limit-mm-per-prompt {\"image\":-1}",
		"m --sim-policy right=2 --dtype fp8",
		"--help",
		"m --port 70000 --sim-load-time -1s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		o, err := parseOptions(strings.Fields(line), nil)
		if err != nil {
			return
		}
		if o.Model == "" || o.ServedName == "" || o.Port < 0 || o.Port > 65535 || o.MaxNumSeqs < 1 || o.TensorParallel < 1 ||
			o.ImageLimit < 0 || o.LoadTime < 0 || o.Workers < 0 || o.KVTokens < 1 || o.DecodeTPS <= 0 {
			t.Fatalf("accepted out-of-range options from %q: %+v", line, o)
		}
	})
}

// FuzzRequestShape: response_format and reasoning_effort of any shape are
// accepted or refused with an error, never a panic; what is accepted as
// structured forces a JSON object.
func FuzzRequestShape(f *testing.F) {
	for _, s := range []string{`{"type":"json_schema","json_schema":{"name":"v","schema":{"type":"object"}}}`, `{"type":"text"}`,
		`{"type":"json_object"}`, `null`, `[]`, `{"type":"json_schema","json_schema":{"schema":1}}`, `"medium"`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		structured, err := structuredOutput(raw)
		if err == nil && structured && !isJSONObject(constrained("not json", nil)) {
			t.Fatalf("structured output %s does not force a JSON object", raw)
		}
		_ = checkReasoningEffort(raw)
	})
}
