package extract

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// Card is the answer to one structure card (prompt A7).
type Card struct {
	// Structure is the base structure id (configs.Structures), left and
	// right collapsed.
	Structure Label `json:"structure"`
	// Invasion is "0" or "1".
	Invasion Label `json:"invasion"`
}

// StructureLabel is the invasion answer for one base structure.
type StructureLabel struct {
	Structure string `json:"structure"`
	Label
}

// Staging is the answer to a T-staging prompt: A8 (structure cards), A9
// (plane groups) or A12 (CarePath MRI pages).
type Staging struct {
	// TStage is "T1".."T4", read from "t_stage" (A8/A9) or "T_stage" (A12).
	TStage Label `json:"t_stage"`
	// Invasion holds one label per base structure in configs order: "0",
	// "1" or why it is missing. Side-qualified keys are collapsed: a
	// structure is invaded when either side is.
	Invasion []StructureLabel `json:"invasion"`
	// Involved lists the structure ids of "involved_structures" (A12),
	// normalised, de-duplicated and sorted; nil when absent.
	Involved []string `json:"involved,omitempty"`
	// Unknown lists the invasion keys and involved names that match no
	// structure (the nasopharynx, the orbit...), sorted. They are recorded,
	// not scored, and do not spoil the rest of the answer.
	Unknown []string `json:"unknown,omitempty"`
	// Evidence is the "evidence" field as given (A12), JSON text when it is
	// not a string.
	Evidence string `json:"evidence,omitempty"`
}

// Invaded returns the ids of the structures answered "1", in configs order,
// for the "Prior diagnostic findings" of a care prompt.
func (s Staging) Invaded() []string {
	var out []string
	for _, l := range s.Invasion {
		if l.Is("1") {
			out = append(out, l.Structure)
		}
	}
	return out
}

// NStaging is the answer to the N-staging prompt A10.
type NStaging struct {
	// NStage is "N0".."N3".
	NStage Label `json:"n_stage"`
	// Evidence is the "evidence" field as given, JSON text when it is not a
	// string.
	Evidence string `json:"evidence,omitempty"`
}

// answerObject finds the one JSON object holding any of keys, by the
// final-answer rule: an object labelled "Final answer" beats every other,
// then one labelled "Answer", then any object in the text (drafts in the
// reasoning included). It fails when there is no text, no JSON object, no
// object with those keys, or two such objects of equal standing that differ.
func answerObject(raw string, keys ...string) (object, *Failure) {
	text, f := finalText(raw)
	if f != nil {
		return nil, f
	}
	found := jsonObjects(text)
	if len(found) == 0 {
		return nil, &Failure{Kind: Unparseable, Detail: "no JSON object in " + quote(text)}
	}
	var answers []foundObject
	for _, o := range found {
		if len(o.obj.lookup(keys...)) > 0 {
			answers = append(answers, o)
		}
	}
	if len(answers) == 0 {
		return nil, &Failure{Kind: MissingField, Detail: "no JSON object has any of the fields " + strings.Join(keys, ", ")}
	}
	if final := labelledObjects(text, answers, finalLabels); len(final) > 0 {
		return oneObject(final, "labelled final JSON answers")
	}
	if labelled := labelledObjects(text, answers, answerLabels); len(labelled) > 0 {
		return oneObject(labelled, "labelled JSON answers")
	}
	return oneObject(answers, "JSON answers")
}

// oneObject returns the answer all of answers (one tier of them) give, or a
// conflict naming the first two that differ.
func oneObject(answers []foundObject, tier string) (object, *Failure) {
	first := canonicalObject(answers[0].obj)
	for _, o := range answers[1:] {
		if c := canonicalObject(o.obj); c != first {
			return nil, &Failure{Kind: Conflicting, Detail: "two different " + tier + ": " + quote(first) + " and " + quote(c)}
		}
	}
	return answers[0].obj, nil
}

// labelledObjects returns the objects of found that a label introduces:
// nothing but spaces, markdown emphasis and a ```json fence between the
// label's separator and the object ("Final answer:\n```json\n{...}").
func labelledObjects(text string, found []foundObject, rules []labelRule) []foundObject {
	starts := map[int]int{}
	for i, o := range found {
		starts[o.start] = i
	}
	var out []foundObject
	seen := map[int]bool{}
	for _, end := range labelEnds(text, rules) {
		at := end + len(text[end:]) - len(strings.TrimLeft(text[end:], objectLead))
		if rest, ok := cutFoldPrefix(text[at:], "json"); ok {
			at = len(text) - len(strings.TrimLeft(rest, objectLead))
		}
		if i, ok := starts[at]; ok && !seen[i] {
			seen[i] = true
			out = append(out, found[i])
		}
	}
	return out
}

// objectLead is what may stand between a label and its JSON object.
const objectLead = " \t\r\n*_`>"

func canonicalObject(o object) string {
	var b bytes.Buffer
	ms := append(object(nil), o...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
	for _, m := range ms {
		b.WriteString(m.key)
		b.WriteByte('=')
		b.WriteString(canonicalJSON(m.value))
		b.WriteByte(';')
	}
	return b.String()
}

// field reads one field that must appear once (or repeat identically).
func field(o object, name string, aliases ...string) (json.RawMessage, *Failure) {
	vals := o.lookup(append([]string{name}, aliases...)...)
	if len(vals) == 0 {
		return nil, &Failure{Kind: MissingField, Field: name, Detail: "the answer has no field " + quote(name)}
	}
	for _, v := range vals[1:] {
		if canonicalJSON(v) != canonicalJSON(vals[0]) {
			return nil, &Failure{Kind: Conflicting, Field: name, Detail: "field given twice: " + quote(string(vals[0])) + " and " + quote(string(v))}
		}
	}
	return vals[0], nil
}

// stringValue decodes a JSON string; ok is false for any other type.
func stringValue(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// stage reads a "T3"/"N2"-style category: prefix then one digit in 0..max
// (min..max), case ignored; "T3a", "stage III", 3 are out of category.
// Where the paper is silent the package reads the spellings of the same
// category as it (docs/extraction.md): spaces ("T 3"), a "Stage" word
// ("Stage N1"), the clinical prefix c ("cT3", "cN2": an MRI stage is a
// clinical stage) and full-width characters ("Ｔ３").
func stage(raw json.RawMessage, name string, prefix byte, min, max byte) Label {
	s, ok := stringValue(raw)
	if !ok {
		return fail(OutOfCategory, name, "%s is not a string like %c%c..%c%c", quote(string(raw)), prefix, min, prefix, max)
	}
	t := strings.ToUpper(strings.Join(strings.Fields(normalizeWidth(s)), ""))
	t = strings.TrimPrefix(t, "STAGE")
	if len(t) == 3 && t[0] == 'C' {
		t = t[1:]
	}
	if len(t) == 2 && t[0] == prefix && t[1] >= min && t[1] <= max {
		return valueOf(t)
	}
	return fail(OutOfCategory, name, "%s is not one of %c%c..%c%c", quote(s), prefix, min, prefix, max)
}

// binary reads an invasion value: the number 0 or 1, or the string "0" or
// "1". Booleans, "yes", 2 and 0.5 are out of category.
func binary(raw json.RawMessage, name string) Label {
	t := strings.TrimSpace(string(raw))
	if s, ok := stringValue(raw); ok {
		t = strings.TrimSpace(s)
	}
	switch t {
	case "0", "1":
		return valueOf(t)
	}
	return fail(OutOfCategory, name, "%s is not 0 or 1", quote(string(raw)))
}

// text reads a free-text field: the string itself, or compact JSON.
func text(raw json.RawMessage) string {
	if s, ok := stringValue(raw); ok {
		return s
	}
	return canonicalJSON(raw)
}

func failed(f *Failure, name string) Label {
	return Label{Failure: f}.withField(name)
}

// StructureCard extracts the answer to a structure card (prompt A7):
// {"structure_id": "...", "invasion": 0|1}. The structure name is normalised
// by s (case, spaces, synonyms; left/right collapsed); a name s does not know
// is out of category.
func StructureCard(raw string, s *configs.Structures) Card {
	o, f := answerObject(raw, "structure_id", "invasion")
	if f != nil {
		return Card{Structure: failed(f, "structure_id"), Invasion: failed(f, "invasion")}
	}
	var c Card
	if v, f := field(o, "structure_id"); f != nil {
		c.Structure = Label{Failure: f}
	} else if name, ok := stringValue(v); !ok {
		c.Structure = fail(OutOfCategory, "structure_id", "%s is not a structure name", quote(string(v)))
	} else if id, ok := s.Normalize(name); !ok {
		c.Structure = fail(OutOfCategory, "structure_id", "%s is not one of the %d base structures", quote(name), len(s.List))
	} else {
		c.Structure = valueOf(id)
	}
	if v, f := field(o, "invasion"); f != nil {
		c.Invasion = Label{Failure: f}
	} else {
		c.Invasion = binary(v, "invasion")
	}
	return c
}

// TStaging extracts a T-staging answer (prompts A8, A9 and A12). Each field
// succeeds or fails on its own, as the paper scores each endpoint on its
// own: a bad t_stage does not spoil the invasion labels, and a structure
// missing from structure_invasion is a MissingField failure for that label
// only.
func TStaging(raw string, s *configs.Structures) Staging {
	ids := s.IDs()
	st := Staging{Invasion: make([]StructureLabel, len(ids))}
	for i, id := range ids {
		st.Invasion[i].Structure = id
	}
	o, f := answerObject(raw, "structure_invasion", "t_stage", "involved_structures")
	if f != nil {
		st.TStage = failed(f, "t_stage")
		for i, id := range ids {
			st.Invasion[i].Label = failed(f, "structure_invasion."+id)
		}
		return st
	}
	if v, f := field(o, "t_stage"); f != nil {
		st.TStage = Label{Failure: f}
	} else {
		st.TStage = stage(v, "t_stage", 'T', '1', '4')
	}
	if v, f := field(o, "evidence"); f == nil {
		st.Evidence = text(v)
	}
	if v, f := field(o, "involved_structures"); f == nil {
		st.Involved, st.Unknown = involved(v, s)
	}
	v, f := field(o, "structure_invasion")
	var inv object
	if f == nil && json.Unmarshal(v, &inv) != nil {
		f = &Failure{Kind: OutOfCategory, Field: "structure_invasion", Detail: quote(string(v)) + " is not an object of structure: 0|1"}
	}
	if f != nil {
		for i, id := range ids {
			st.Invasion[i].Label = failed(f, "structure_invasion."+id)
		}
		return st
	}
	labels, unknown := invasionLabels(inv, s)
	for i, id := range ids {
		st.Invasion[i].Label = labels[id]
	}
	st.Unknown = sortedUnique(append(st.Unknown, unknown...))
	return st
}

// side reports the side a structure key names, "" for none. It mirrors the
// qualifiers configs.Structures.Normalize strips.
func side(key string) string {
	k := strings.ToLower(strings.TrimSpace(key))
	k = strings.NewReplacer(" ", "_", "-", "_").Replace(k)
	for _, q := range []struct{ prefix, suffix, side string }{
		{"left_", "_left", "left"}, {"l_", "_l", "left"},
		{"right_", "_right", "right"}, {"r_", "_r", "right"},
	} {
		if strings.HasPrefix(k, q.prefix) || strings.HasSuffix(k, q.suffix) {
			return q.side
		}
	}
	return ""
}

// invasionLabels maps structure_invasion to one label per structure id.
// Keys naming the same structure and side must agree (else Conflicting);
// sides collapse by OR; an invalid value makes the structure's label out of
// category; an absent structure is MissingField.
func invasionLabels(inv object, s *configs.Structures) (map[string]Label, []string) {
	type slot struct{ id, side string }
	values := map[slot]Label{}
	var unknown []string
	for _, m := range inv {
		id, ok := s.Normalize(m.key)
		if !ok {
			unknown = append(unknown, m.key)
			continue
		}
		name := "structure_invasion." + id
		l := binary(m.value, name)
		k := slot{id, side(m.key)}
		prev, seen := values[k]
		switch {
		case !seen:
			values[k] = l
		case prev.OK() && l.OK() && prev.Value != l.Value:
			values[k] = fail(Conflicting, name, "key %s given twice with different values", quote(m.key))
		case prev.OK() && !l.OK():
			values[k] = l
		}
	}
	labels := make(map[string]Label, len(s.List))
	for _, id := range s.IDs() {
		name := "structure_invasion." + id
		var found []Label
		for _, sd := range []string{"", "left", "right"} {
			if l, ok := values[slot{id, sd}]; ok {
				found = append(found, l)
			}
		}
		labels[id] = collapse(found, name)
	}
	return labels, unknown
}

// collapse merges the side labels of one structure: a failure wins, then
// "1" if any side is invaded, else "0".
func collapse(sides []Label, name string) Label {
	if len(sides) == 0 {
		return fail(MissingField, name, "structure_invasion has no key for this structure")
	}
	out := valueOf("0")
	for _, l := range sides {
		if !l.OK() {
			return l
		}
		if l.Value == "1" {
			out = valueOf("1")
		}
	}
	return out
}

// involved reads involved_structures: a list of names, or one string of
// comma-separated names.
func involved(raw json.RawMessage, s *configs.Structures) (ids, unknown []string) {
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		str, ok := stringValue(raw)
		if !ok {
			return nil, []string{canonicalJSON(raw)}
		}
		names = strings.FieldsFunc(str, func(r rune) bool { return r == ',' || r == ';' })
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if id, ok := s.Normalize(n); ok {
			ids = append(ids, id)
		} else {
			unknown = append(unknown, n)
		}
	}
	ids = sortedUnique(ids)
	if ids == nil {
		ids = []string{}
	}
	return ids, sortedUnique(unknown)
}

func sortedUnique(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := append([]string(nil), list...)
	sort.Strings(out)
	j := 0
	for i, v := range out {
		if i == 0 || v != out[j-1] {
			out[j] = v
			j++
		}
	}
	return out[:j]
}

// NStage extracts the answer to the N-staging prompt A10: {"n_stage":
// "N0".."N3", "evidence": ...}. Only n_stage is required.
func NStage(raw string) NStaging {
	o, f := answerObject(raw, "n_stage")
	if f != nil {
		return NStaging{NStage: failed(f, "n_stage")}
	}
	var n NStaging
	if v, f := field(o, "n_stage"); f != nil {
		n.NStage = Label{Failure: f}
	} else {
		n.NStage = stage(v, "n_stage", 'N', '0', '3')
	}
	if v, f := field(o, "evidence"); f == nil {
		n.Evidence = text(v)
	}
	return n
}
