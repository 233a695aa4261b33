package extract

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// fracs is reasoning with n LaTeX fractions: 2n '{' that open no JSON.
func fracs(n int) string {
	return strings.Repeat(`The ratio \frac{a}{b} of the enhancing area is small. `, n)
}

// TestJSONAnswerAfterManyLaTeXBraces: a right answer after long LaTeX
// reasoning is found, whatever the number of braces before it (the search
// used to give up after 256 '{').
func TestJSONAnswerAfterManyLaTeXBraces(t *testing.T) {
	s := configs.DefaultStructures()
	for _, n := range []int{128, 129, 1000, 20000} {
		raw := fracs(n) + "\n" + `{"structure_id":"clivus","invasion":1}`
		c := StructureCard(raw, s)
		ok("clivus").check(t, fmt.Sprintf("%d fractions [structure]", n), c.Structure)
		ok("1").check(t, fmt.Sprintf("%d fractions [invasion]", n), c.Invasion)
		ok("N2").check(t, fmt.Sprintf("%d fractions [n_stage]", n), NStage(fracs(n)+`{"n_stage":"N2"}`).NStage)
	}
}

// hostile are texts built to make a search that parses from every '{'
// quadratic; each ends with the answer, which must still be found.
func hostile(n int) map[string]string {
	answer := `{"n_stage":"N1"}`
	rep := func(unit string) string { return strings.Repeat(unit, n/len(unit)+1) }
	return map[string]string{
		"nested keys cut off":   rep(`{"k":`) + "\n" + answer,
		"nested arrays":         rep(`{"a":[`) + "\n" + answer,
		"open strings":          rep(`{"a`) + `"` + "\n" + answer,
		"string of braces":      `{"x":"` + rep(`{"`) + "\n" + answer,
		"bare braces":           rep("{") + "\n" + answer,
		"latex":                 rep(`\frac{a}{b}`) + "\n" + answer,
		"values then garbage":   rep(`{"k":1,`) + "x\n" + answer,
		"quotes flip":           rep(`{"{"`) + "\n" + answer,
		"escapes":               rep(`{"\"{\\`) + "\n" + answer,
		"repeated answer drift": rep(`{"structure_invasion": {"clivus": 1, `) + "\n" + answer,
	}
}

// TestJSONSearchWorkIsLinear holds the search to linear work on hostile
// texts: the bytes parsed stay within a small multiple of the text's
// length (a work counter, never a clock).
func TestJSONSearchWorkIsLinear(t *testing.T) {
	const n = 200_000
	for name, text := range hostile(n) {
		found, work := scanObjects(text)
		if work > 4*len(text)+64 {
			t.Errorf("%s: parsed %d bytes of a %d-byte text, want at most 4×", name, work, len(text))
		}
		if len(found) == 0 || found[len(found)-1].obj.lookup("n_stage") == nil {
			t.Errorf("%s: the final answer was not found (%d objects)", name, len(found))
		}
		if l := NStage(text).NStage; !l.Is("N1") {
			t.Errorf("%s: NStage = %+v, want N1", name, l)
		}
	}
}

// naiveObjects is the search by definition: parse a JSON object from every
// '{' in turn, and after one parses go on after its end.
func naiveObjects(text string) []foundObject {
	var out []foundObject
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		dec := json.NewDecoder(strings.NewReader(text[start:]))
		var raw json.RawMessage
		var obj object
		if dec.Decode(&raw) != nil || json.Unmarshal(raw, &obj) != nil {
			i = start + 1
			continue
		}
		end := start + int(dec.InputOffset())
		out = append(out, foundObject{obj: obj, start: start, end: end})
		i = end
	}
	return out
}

func sameObjects(a, b []foundObject) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].start != b[i].start || a[i].end != b[i].end || canonicalObject(a[i].obj) != canonicalObject(b[i].obj) {
			return false
		}
	}
	return true
}

func TestJSONSearchFindsWhatTheDefinitionFinds(t *testing.T) {
	for _, text := range append(fuzzSeeds, jsonSeeds...) {
		if got, want := jsonObjects(text), naiveObjects(text); !sameObjects(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
	for name, text := range hostile(2000) {
		if got, want := jsonObjects(text), naiveObjects(text); !sameObjects(got, want) {
			t.Errorf("%s: got %d objects, want %d", name, len(got), len(want))
		}
	}
}

var jsonSeeds = []string{
	`{"a":1} {"b":{"c":2}}`, `{"a":"{\"b\":1}"}`, `{"a" {"b":1}}`, `{"x":"{"y":1}`, `{"a":[{"b":1},{"c":2}`,
	"```json\n{\"n_stage\": \"N0\"}\n```", `{"a":1,}{"b":2}`, `{"a":{"b":{"c":{}}}`, `{ "a" : [ 1 , { } ] }`,
	`{"\u00e9":"\ud83d\ude00"}`, `{"a":tru}{"b":true}`, `{}}{`, `{"a":-0.5e10}`, `{"a":01}`,
}

// FuzzJSONObjects holds the linear search to the definition and to its
// work bound on any text.
func FuzzJSONObjects(f *testing.F) {
	for _, s := range append(fuzzSeeds, jsonSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		found, work := scanObjects(text)
		if want := naiveObjects(text); !sameObjects(found, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, found, want)
		}
		if work > 4*len(text)+64 {
			t.Fatalf("%q: %d bytes of work for %d bytes of text", text, work, len(text))
		}
	})
}

// BenchmarkJSONSearch1MB searches 1 MB answers: LaTeX reasoning, a
// degenerate nested repetition cut off at the token limit, and braces
// inside strings, each followed by the final answer.
func BenchmarkJSONSearch1MB(b *testing.B) {
	for name, text := range hostile(1 << 20) {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if l := NStage(text).NStage; !l.Is("N1") {
					b.Fatal(l)
				}
			}
		})
	}
}
