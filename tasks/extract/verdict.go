package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// Verdict is a rubric judge's answer to prompt A15: "a JSON object with
// exactly the following fields: "explanation" and "criteria_met"", or why
// no valid one could be read.
type Verdict struct {
	// Met is criteria_met: a positive requirement satisfied, or an error
	// criterion triggered.
	Met         bool     `json:"criteria_met"`
	Explanation string   `json:"explanation,omitempty"`
	Failure     *Failure `json:"failure,omitempty"`
}

// OK reports whether the verdict is valid.
func (v Verdict) OK() bool { return v.Failure == nil }

// JudgeVerdict reads a judge's final text (reasoning removed). The answer
// is valid when the JSON objects of the text that carry criteria_met (in
// fences, after prose, or bare) all give a boolean criteria_met and a
// string explanation, and agree; the last one is taken. Anything else is a
// typed failure: no text, no object, a missing field, a field of the
// wrong type ("true" as a string is not a boolean; null is neither a
// boolean nor a string, so "criteria_met": null is no verdict, never a
// "not met", and "explanation": null is refused like a list), or objects
// that disagree. Nothing is guessed.
func JudgeVerdict(raw string) Verdict {
	text, f := finalText(raw)
	if f != nil {
		return Verdict{Failure: f}
	}
	found := jsonObjects(text)
	if len(found) == 0 {
		return Verdict{Failure: &Failure{Kind: Unparseable, Detail: "no JSON object in " + quote(text)}}
	}
	var verdicts []Verdict
	for _, fo := range found {
		if len(fo.obj.exact("criteria_met")) == 0 {
			continue
		}
		v := verdictOf(fo.obj)
		if !v.OK() {
			return v
		}
		verdicts = append(verdicts, v)
	}
	if len(verdicts) == 0 {
		return Verdict{Failure: &Failure{Kind: MissingField, Field: "criteria_met", Detail: "no JSON object of the answer has it"}}
	}
	last := verdicts[len(verdicts)-1]
	for _, v := range verdicts {
		if v.Met != last.Met {
			return Verdict{Failure: &Failure{Kind: Conflicting, Field: "criteria_met", Detail: "the answer's JSON objects give both true and false"}}
		}
	}
	return last
}

// verdictOf reads one object's criteria_met and explanation.
func verdictOf(o object) Verdict {
	mets := o.exact("criteria_met")
	var v Verdict
	for i, raw := range mets {
		var met bool
		if err := strictUnmarshal(raw, &met); err != nil {
			return Verdict{Failure: &Failure{Kind: OutOfCategory, Field: "criteria_met", Detail: "must be a boolean, got " + quote(string(raw))}}
		}
		if i > 0 && met != v.Met {
			return Verdict{Failure: &Failure{Kind: Conflicting, Field: "criteria_met", Detail: "given twice, true and false"}}
		}
		v.Met = met
	}
	exps := o.exact("explanation")
	if len(exps) == 0 {
		return Verdict{Failure: &Failure{Kind: MissingField, Field: "explanation", Detail: "the verdict has criteria_met but no explanation"}}
	}
	if err := strictUnmarshal(exps[len(exps)-1], &v.Explanation); err != nil {
		return Verdict{Failure: &Failure{Kind: OutOfCategory, Field: "explanation", Detail: "must be a string, got " + quote(string(exps[len(exps)-1]))}}
	}
	return v
}

// strictUnmarshal decodes a field's value into v, refusing JSON null:
// encoding/json leaves v as it was for null, so a null criteria_met would
// read as false and a null explanation as "" (A15: "criteria_met must be
// a boolean", "explanation must be a brief string"; null is neither).
func strictUnmarshal(raw json.RawMessage, v any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errNull
	}
	return json.Unmarshal(raw, v)
}

var errNull = errors.New("null")

// exact returns the values of the members named exactly name (the judge
// is told the field names; a differently spelt key is not the field).
func (o object) exact(name string) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range o {
		if strings.TrimSpace(m.key) == name {
			out = append(out, m.value)
		}
	}
	return out
}

// VerdictSchema is the JSON schema of a verdict, for an engine's
// structured outputs (vLLM's response_format json_schema): an object with
// a string explanation and a boolean criteria_met, both required, nothing
// else.
func VerdictSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"explanation":{"type":"string"},"criteria_met":{"type":"boolean"}},"required":["explanation","criteria_met"],"additionalProperties":false}`)
}
