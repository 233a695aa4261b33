package extract

import (
	"encoding/json"
	"testing"
)

// TestJudgeVerdict: prompt A15 asks for "a JSON object with exactly the
// following fields: "explanation" and "criteria_met". "criteria_met" must
// be a boolean. "explanation" must be a brief string". What is not such an
// answer is a typed failure, retried by the campaign and never guessed.
func TestJudgeVerdict(t *testing.T) {
	for _, c := range []struct {
		in   string
		met  bool
		kind FailureKind // "" for a valid verdict
	}{
		{`{"explanation": "Says pruritus.", "criteria_met": true}`, true, ""},
		{`{"criteria_met": false, "explanation": "No grade."}`, false, ""},
		{"<think>weighing it</think>\n```json\n{\"explanation\": \"x\", \"criteria_met\": true}\n```", true, ""},
		{`Draft {"explanation":"a","criteria_met":true} then {"explanation":"b","criteria_met":true}`, true, ""},
		{`{"explanation":"a","criteria_met":true} {"explanation":"b","criteria_met":false}`, false, Conflicting},
		{`{"explanation":"a","criteria_met":true,"criteria_met":false}`, false, Conflicting},
		{`{"explanation": "x", "criteria_met": "true"}`, false, OutOfCategory},
		{`{"explanation": 3, "criteria_met": true}`, false, OutOfCategory},
		// null is neither a boolean nor a string: no verdict, never a
		// valid "not met" (issue 25, item 6).
		{`{"explanation": "Cannot tell.", "criteria_met": null}`, false, OutOfCategory},
		{`{"criteria_met": null, "explanation": null}`, false, OutOfCategory},
		{"```json\n{\"explanation\": \"x\", \"criteria_met\": null }\n```", false, OutOfCategory},
		{`Draft {"explanation":"a","criteria_met":null} final {"explanation":"b","criteria_met":false}`, false, OutOfCategory},
		// "explanation must be a brief string": null and a list are refused alike.
		{`{"explanation": null, "criteria_met": true}`, false, OutOfCategory},
		{`{"explanation": ["Says pruritus."], "criteria_met": true}`, false, OutOfCategory},
		{`{"explanation": "", "criteria_met": false}`, false, ""},
		{`{"criteria_met": true}`, false, MissingField},
		{`{"explanation": "x", "Criteria_Met": true}`, false, MissingField},
		{`{"explanation": "x", "met": true}`, false, MissingField},
		{`The response meets it.`, false, Unparseable},
		{`{"explanation": "The response identifies the adverse`, false, Unparseable},
		{"<think>still thinking when the limit came", false, Empty},
		{"", false, Empty},
	} {
		v := JudgeVerdict(c.in)
		switch {
		case c.kind == "" && !v.OK():
			t.Errorf("%q: failure %v, want criteria_met %v", c.in, v.Failure, c.met)
		case c.kind == "" && v.Met != c.met:
			t.Errorf("%q: criteria_met %v, want %v", c.in, v.Met, c.met)
		case c.kind != "" && (v.OK() || v.Failure.Kind != c.kind):
			t.Errorf("%q: %+v, want a %s failure", c.in, v, c.kind)
		}
	}
}

// TestVerdictSchemaAcceptsAVerdict: the schema sent for constrained
// decoding is a JSON object requiring both fields.
func TestVerdictSchemaAcceptsAVerdict(t *testing.T) {
	var s struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(VerdictSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || len(s.Required) != 2 || s.Properties["criteria_met"] == nil || s.Properties["explanation"] == nil {
		t.Errorf("schema %s", VerdictSchema())
	}
}

// FuzzJudgeVerdict: any text gives exactly one of a verdict and a typed
// failure.
func FuzzJudgeVerdict(f *testing.F) {
	addSeeds(f)
	f.Add(`{"explanation":"x","criteria_met":true}`)
	f.Add(`{"criteria_met":[true],"explanation":{}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		v := JudgeVerdict(raw)
		if v.Failure != nil && (v.Failure.Kind == "" || v.Met || v.Explanation != "") {
			t.Fatalf("%q: failure %+v with a verdict", raw, v)
		}
	})
}
