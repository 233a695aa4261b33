package simengine_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// drawRight is Decide's documented rule on its own: right iff
// (sha256("<seed>|<model>|<id>")[0:8] >> 11) / 2^53 < p.
func drawRight(seed int64, model, id string, p float64) bool {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d|%s|%s", seed, model, id)))
	return float64(binary.BigEndian.Uint64(h[:8])>>11)/(1<<53) < p
}

// consultItem is a free-text item of four right and four wrong parts.
func consultItem() simkey.Item {
	it := simkey.Item{ID: "C01/Q1", Contains: "Question Q1", Constant: "Refer to the tumour board."}
	for i := range 4 {
		it.Parts = append(it.Parts,
			simkey.Part{ID: fmt.Sprintf("p%d", i), Text: fmt.Sprintf("Recommend step %d.", i), Right: true},
			simkey.Part{ID: fmt.Sprintf("e%d", i), Text: fmt.Sprintf("Avoid error %d.", i)})
	}
	return it
}

func TestComposedAnswerSaysEachPartByItsOwnDraw(t *testing.T) {
	t.Parallel()
	it := consultItem()
	key := writeKey(t, t.TempDir(), []simkey.Item{it})
	const model = "Qwen3-8B"
	ask := func(p *engineProc) string {
		t.Helper()
		status, m := p.chat(textMessage("Case C01. Question Q1: what next?", map[string]any{"model": model}))
		if status != http.StatusOK {
			t.Fatalf("%d %v", status, m)
		}
		return content(t, m)
	}

	var want []string
	for _, part := range it.Parts {
		if drawRight(3, model, it.ID+"#"+part.ID, 0.5) == part.Right {
			want = append(want, part.Text)
		}
	}
	if len(want) == 0 || len(want) == len(it.Parts) {
		t.Fatalf("the fixture is degenerate: says %d of %d parts", len(want), len(it.Parts))
	}
	half := start(t, "--sim-key", key, "--sim-policy", "right=0.5", "--sim-seed", "3", "--served-model-name", model)
	if got := ask(half); got != strings.Join(want, " ") {
		t.Errorf("right=0.5 says %q, want %q", got, strings.Join(want, " "))
	}

	oracle := start(t, "--sim-key", key, "--served-model-name", model)
	if got := ask(oracle); got != "Recommend step 0. Recommend step 1. Recommend step 2. Recommend step 3." {
		t.Errorf("the oracle says %q, want every right part and no wrong one", got)
	}
	never := start(t, "--sim-key", key, "--sim-policy", "right=0", "--served-model-name", model)
	if got := ask(never); got != "Avoid error 0. Avoid error 1. Avoid error 2. Avoid error 3." {
		t.Errorf("right=0 says %q, want every wrong part and no right one", got)
	}
	constant := start(t, "--sim-key", key, "--sim-policy", "constant", "--served-model-name", model)
	if got := ask(constant); got != it.Constant {
		t.Errorf("constant says %q, want %q", got, it.Constant)
	}
}

type verdict struct {
	Explanation *string `json:"explanation"`
	CriteriaMet *bool   `json:"criteria_met"`
}

func TestJudgeVerdicts(t *testing.T) {
	t.Parallel()
	judge := simkey.Item{ID: "C01/Q1/judge/p1", Contains: "Rubric item: Recommend step 1.", Also: []string{"Question Q1"},
		Verdict: &simkey.Verdict{Claim: "Recommend step 1.", From: "Response:", To: "Rubric item:"}}
	key := writeKey(t, t.TempDir(), []simkey.Item{judge})
	const model = "gpt-oss-120b"
	prompt := func(response string) string {
		return "Question Q1: what next?\nResponse: " + response + "\nRubric item: Recommend step 1."
	}
	ask := func(p *engineProc, text string, extra map[string]any) (string, *verdict) {
		t.Helper()
		if extra == nil {
			extra = map[string]any{}
		}
		extra["model"] = model
		status, m := p.chat(textMessage(text, extra))
		if status != http.StatusOK {
			t.Fatalf("%d %v", status, m)
		}
		c := content(t, m)
		var v verdict
		if json.Unmarshal([]byte(c), &v) != nil {
			return c, nil
		}
		return c, &v
	}

	oracle := start(t, "--sim-key", key, "--served-model-name", model)
	for response, met := range map[string]bool{"Recommend step 1. Avoid error 2.": true, "Avoid error 2.": false} {
		c, v := ask(oracle, prompt(response), nil)
		if v == nil || v.CriteriaMet == nil || *v.CriteriaMet != met || v.Explanation == nil || *v.Explanation == "" {
			t.Errorf("oracle on %q = %q, want criteria_met %v with an explanation", response, c, met)
		}
	}

	// right=0.6: each response judged has its own draw on the item's id,
	// "|" and the first 16 hex digits of the request text's sha256.
	noisy := start(t, "--sim-key", key, "--sim-policy", "right=0.6", "--sim-seed", "9", "--served-model-name", model)
	flipped := 0
	for i := range 30 {
		response := fmt.Sprintf("Note %d.", i)
		truth := i%2 == 0
		if truth {
			response += " Recommend step 1."
		}
		text := prompt(response)
		sum := sha256.Sum256([]byte(text))
		right := drawRight(9, model, judge.ID+"|"+hex.EncodeToString(sum[:8]), 0.6)
		c, v := ask(noisy, text, nil)
		if v == nil || v.CriteriaMet == nil {
			t.Fatalf("response %d: no verdict: %q", i, c)
		}
		if want := truth == right; *v.CriteriaMet != want {
			t.Errorf("response %d: criteria_met %v, want %v (truth %v, drawn right %v)", i, *v.CriteriaMet, want, truth, right)
		}
		if !right {
			flipped++
		}
	}
	if flipped == 0 || flipped == 30 {
		t.Fatalf("the fixture is degenerate: %d of 30 verdicts wrong", flipped)
	}

	garbage := start(t, "--sim-key", key, "--sim-policy", "garbage", "--served-model-name", model)
	if c, v := ask(garbage, prompt("Recommend step 1."), nil); v != nil {
		t.Errorf("garbage judge answered JSON %q", c)
	}
	schema := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "schema": map[string]any{"type": "object"}}}
	c, v := ask(garbage, prompt("Recommend step 1."), map[string]any{"response_format": schema, "reasoning_effort": "medium"})
	if v == nil || v.CriteriaMet == nil || !*v.CriteriaMet {
		t.Errorf("garbage judge under json_schema = %q, want the constrained (right) verdict", c)
	}
}

func TestResponseFormatAndReasoningEffortAreChecked(t *testing.T) {
	t.Parallel()
	key := writeKey(t, t.TempDir(), []simkey.Item{{ID: "A", Right: `{"answer": 1}`}})
	p := start(t, "--sim-key", key, "--sim-policy", "garbage")
	for name, tc := range map[string]struct {
		extra  map[string]any
		status int
		want   string
	}{
		"text":               {map[string]any{"response_format": map[string]any{"type": "text"}}, 200, ""},
		"json_object":        {map[string]any{"response_format": map[string]any{"type": "json_object"}}, 200, `{"answer": 1}`},
		"unknown type":       {map[string]any{"response_format": map[string]any{"type": "yaml"}}, 400, "response_format.type"},
		"schema without":     {map[string]any{"response_format": map[string]any{"type": "json_schema"}}, 400, "needs its json_schema"},
		"schema no name":     {map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{}}}, 400, "name: Field required"},
		"schema not object":  {map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "v", "schema": 3}}}, 400, "valid dictionary"},
		"effort high":        {map[string]any{"reasoning_effort": "high"}, 200, ""},
		"effort unknown":     {map[string]any{"reasoning_effort": "extreme"}, 400, "reasoning_effort"},
		"effort not string":  {map[string]any{"reasoning_effort": 2}, 400, "reasoning_effort"},
		"response_format []": {map[string]any{"response_format": []any{}}, 400, "response_format"},
	} {
		status, m := p.chat(textMessage("anything", tc.extra))
		if status != tc.status {
			t.Errorf("%s: status %d, want %d: %v", name, status, tc.status, m)
			continue
		}
		if status == 200 {
			if tc.want != "" && content(t, m) != tc.want {
				t.Errorf("%s: content %q, want %q", name, content(t, m), tc.want)
			}
			continue
		}
		if msg := fmt.Sprint(m["error"]); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error %s, want it to say %q", name, msg, tc.want)
		}
	}
}

func TestReasoningTokensLengthenTheThought(t *testing.T) {
	t.Parallel()
	key := writeKey(t, t.TempDir(), []simkey.Item{{ID: "A", Right: "ANSWER"}})
	p := start(t, "--sim-key", key, "--sim-reasoning", "--sim-reasoning-tokens", "300", "--reasoning-parser", "qwen3")
	_, m := p.chat(textMessage("q", map[string]any{"max_tokens": 250}))
	msg := m["choices"].([]any)[0].(map[string]any)
	if msg["finish_reason"] != "length" {
		t.Errorf("300 tokens of reasoning under max_tokens 250: finish %v, want length", msg["finish_reason"])
	}
	_, m = p.chat(textMessage("q", map[string]any{"max_tokens": 400}))
	msg = m["choices"].([]any)[0].(map[string]any)
	reasoning, _ := msg["message"].(map[string]any)["reasoning"].(string)
	if msg["finish_reason"] != "stop" || len([]rune(reasoning)) != 1200 || msg["message"].(map[string]any)["content"] != "ANSWER" {
		t.Errorf("under max_tokens 400: finish %v, %d runes of reasoning (want 1200), message %v", msg["finish_reason"], len([]rune(reasoning)), msg["message"])
	}
}
