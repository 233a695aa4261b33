package extract

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// choiceSet is the set of answers a closed question allows: option values
// (letters "A".."G", or "0"/"1") and, optionally, names a model may write
// instead of the letter (the sequence class names of prompt A6).
type choiceSet struct {
	values []string          // valid values in option order
	byKey  map[string]string // normalised spelling → value
	letter bool              // values are option letters (prose-safe only in upper case)
}

func newChoiceSet(values []string, names map[string]string, letter bool) choiceSet {
	c := choiceSet{byKey: map[string]string{}, letter: letter}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		c.values = append(c.values, v)
		c.byKey[choiceKey(v)] = v
	}
	for name, v := range names {
		c.byKey[choiceKey(name)] = v
	}
	return c
}

// choiceKey normalises a spelling: case, spaces, hyphens and underscores.
func choiceKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// decoration is what models wrap answers in: markdown emphasis, quotes,
// brackets, trailing punctuation.
const decoration = " \t*_`\"'“”‘’()[]<>#>:;,.!。"

// match maps one answer string to a value. ok is false when s does not name
// a valid choice; conflict is true when it names two ("A or B", "A, C").
// An option followed by a remark is that option: "1 (confidence 0.9)",
// "C (T1+C_Ax), not A", "B because the CSF is bright".
func (c choiceSet) match(s string) (value string, ok, conflict bool) {
	s = strings.TrimSpace(s)
	if v, found := c.byKey[choiceKey(strings.Trim(s, decoration))]; found {
		return v, true, false
	}
	s = strings.TrimLeft(s, decoration)
	if rest, found := cutFoldPrefix(s, "option"); found {
		s = strings.TrimLeft(rest, decoration)
	}
	tokens := answerTokens(s)
	if len(tokens) == 0 {
		return "", false, false
	}
	v, found := c.byKey[choiceKey(tokens[0])]
	if !found || (len(tokens) > 1 && !c.standaloneToken(tokens[0])) {
		return "", false, false
	}
	switch rest := s[strings.Index(s, tokens[0])+len(tokens[0]):]; {
	case !c.letter && startsNumber(rest):
		return "", false, false // "0.9" is a number, not option 0
	case c.listsAnother(rest, v) || c.restatesAnother(rest, v):
		return "", false, true
	case negated(rest):
		return "", false, false // "A is wrong" answers nothing
	}
	return v, true, false
}

// startsNumber reports whether rest continues a number: "0.9", "1,5".
func startsNumber(rest string) bool {
	return len(rest) >= 2 && (rest[0] == '.' || rest[0] == ',') && '0' <= rest[1] && rest[1] <= '9'
}

// listSeparators join two answers: "A/B", "A, C", "A; C", "A | B", "A & B".
const listSeparators = " \t*_`\"'“”‘’,;/|&+"

// listsAnother reports whether rest, the text after an answer's option,
// gives a second, different option as an answer too: straight after it
// ("A/B", "A, C", "A and C", "A B") or after an "or" ("B or maybe C"). A
// remark that only mentions another option ("C, not A", "1 (confidence
// 0.9)") lists none.
func (c choiceSet) listsAnother(rest, v string) bool {
	r := strings.TrimLeft(rest, listSeparators)
	for _, word := range []string{"or ", "and ", "vs ", "vs. ", "versus ", "或", "和"} {
		if after, found := cutFoldPrefix(r, word); found {
			r = strings.TrimLeft(after, listSeparators+"(")
			break
		}
	}
	if c.otherOptionFirst(r, v, false) {
		return true
	}
	tokens := answerTokens(rest)
	for i, t := range tokens {
		if !strings.EqualFold(t, "or") && t != "或" {
			continue
		}
		for _, u := range tokens[i+1:] {
			if w, found := c.byKey[choiceKey(u)]; found && w != v && c.standaloneToken(u) {
				return true
			}
		}
	}
	return false
}

// restatesAnother reports whether an explanation right after the option
// names a different option by its name: "C. T1_Ax" (letter and name
// disagree).
func (c choiceSet) restatesAnother(rest, v string) bool {
	r := strings.TrimLeft(rest, " \t*_`\"'“”‘’.:)(-–—=")
	return c.otherOptionFirst(r, v, true)
}

// otherOptionFirst reports whether r starts with an option other than v;
// namesOnly considers only options named in full (sequence class names),
// not bare letters or digits.
func (c choiceSet) otherOptionFirst(r, v string, namesOnly bool) bool {
	tokens := answerTokens(r)
	if len(tokens) == 0 || !strings.HasPrefix(r, tokens[0]) {
		return false
	}
	w, found := c.byKey[choiceKey(tokens[0])]
	if !found || w == v || !c.standaloneToken(tokens[0]) {
		return false
	}
	return !namesOnly || !contains(c.values, tokens[0])
}

// negated reports whether the remark after an option rejects it: "A is
// wrong", "B is not the answer".
func negated(rest string) bool {
	r := strings.ToLower(strings.TrimLeft(rest, " \t*_`\"'"))
	for _, p := range []string{"is not", "isn't", "is wrong", "is incorrect", "is unlikely", "is ruled out", "is excluded", "can be excluded", "can be ruled out"} {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return false
}

// standaloneToken reports whether a token of prose is an option itself and
// not an ordinary word: a lower-case "a" is an article, not option A.
func (c choiceSet) standaloneToken(t string) bool {
	if !c.letter {
		return true
	}
	if len([]rune(t)) == 1 {
		return unicode.IsUpper([]rune(t)[0])
	}
	return true
}

// answerTokens splits s into words of letters, digits, '_' and '+'.
func answerTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '+')
	})
}

func cutFoldPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// A label is a keyword, then a separator within a few bytes: "Final
// answer: C", "**Answer:** C", "The answer is C", "答案：C". Without a
// separator there is no label, so "To answer this question" is none.
// Keywords are found with strings.Index and the separator is matched
// anchored right after them: a regexp scanning all of a long reasoning text
// costs milliseconds.
var (
	finalKeywords  = []string{"final"}
	answerKeywords = []string{"answer", "option", "choice", "答案", "选项"}
	labelSeparator = regexp.MustCompile(`^["']?\s*(?:\*\*|__)?\s*(?:is\s*:?|:|：|=)`)
	finalSeparator = regexp.MustCompile(`^\s+answer\s*(?:\*\*|__)?\s*(?:is\s*:?|:|：|=|-)`)
)

// labelWindow bounds how far after a keyword its separator may end.
const labelWindow = 24

// labelHit is one label in a text: the keyword starts at start and the
// separator ends at end.
type labelHit struct{ start, end int }

// labelHits returns the labels of text in text order: each keyword followed
// by a separator. Matching ignores ASCII case.
func labelHits(text string, keywords []string, sep *regexp.Regexp) []labelHit {
	lower := asciiLower(text)
	var hits []labelHit
	for _, kw := range keywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], kw)
			if i < 0 {
				break
			}
			at := from + i + len(kw)
			from = at
			window := lower[at:min(len(lower), at+labelWindow)]
			if loc := sep.FindStringIndex(window); loc != nil {
				hits = append(hits, labelHit{at - len(kw), at + loc[1]})
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	return hits
}

// labelEnds returns where each label of text ends, in text order.
func labelEnds(text string, keywords []string, sep *regexp.Regexp) []int {
	hits := labelHits(text, keywords, sep)
	ends := make([]int, len(hits))
	for i, h := range hits {
		ends[i] = h.end
	}
	return ends
}

// labelled returns, for each label in text, the answer it introduces: the
// text after its separator to the end of its line or the next label,
// whichever comes first, with any \boxed{X} in it read as X. The spans do
// not overlap, so a long line of labels is read in linear time.
func labelled(text string, keywords []string, sep *regexp.Regexp) []string {
	hits := labelHits(text, keywords, sep)
	var out []string
	for i, h := range hits {
		limit := len(text)
		for _, next := range hits[i+1:] {
			if next.start >= h.end {
				limit = next.start
				break
			}
		}
		rest := text[h.end:limit]
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		out = append(out, unbox(rest))
	}
	return out
}

// tierResult is what one tier of evidence (boxes, labels, lines) says.
type tierResult struct {
	values  []string // distinct valid values in order of appearance
	invalid []string // answers given at this tier that name no choice
	clash   bool     // one answer names two options
}

func (c choiceSet) tier(answers []string) tierResult {
	var r tierResult
	for _, a := range answers {
		v, ok, conflict := c.match(a)
		switch {
		case conflict:
			r.clash = true
		case ok:
			if !contains(r.values, v) {
				r.values = append(r.values, v)
			}
		default:
			r.invalid = append(r.invalid, strings.TrimSpace(a))
		}
	}
	return r
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// standaloneLines returns every line that is nothing but an option:
// "C", "**C**", "(C)", "Option C", "T1+C_Ax", or an option followed by its
// explanation after a separator ("C. T1+C_Ax", "A) Concurrent
// chemoradiotherapy", "0 (normal tissue)") that names no other option.
// Numbered-list lines ("1. The slide shows") are not options for the 0/1
// questions: only "(", ":" and dashes separate an explanation there.
func (c choiceSet) standaloneLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.Trim(line, decoration)
		if line == "" {
			continue
		}
		if _, ok := c.byKey[choiceKey(line)]; ok {
			out = append(out, line)
			continue
		}
		rest, _ := cutFoldPrefix(line, "option")
		rest = strings.TrimLeft(rest, " *_")
		tokens := answerTokens(rest)
		if len(tokens) == 0 || !strings.HasPrefix(rest, tokens[0]) {
			continue
		}
		v, ok := c.byKey[choiceKey(tokens[0])]
		if !ok || !c.standaloneToken(tokens[0]) {
			continue
		}
		after := strings.TrimLeft(rest[len(tokens[0]):], " *_")
		seps := "(:-–—"
		if c.letter {
			seps = ".):-–—"
		}
		if after == "" {
			out = append(out, line)
			continue
		}
		if strings.HasPrefix(after, "/") || strings.HasPrefix(strings.ToLower(after), "or ") {
			out = append(out, line) // "0 or 1": match reports the conflict
			continue
		}
		if !strings.ContainsRune(seps, []rune(after)[0]) {
			continue
		}
		ambiguous := false
		for _, t := range tokens[1:] {
			if w, other := c.byKey[choiceKey(t)]; other && w != v && c.standaloneToken(t) {
				ambiguous = true
			}
		}
		if !ambiguous {
			out = append(out, line)
		}
	}
	return out
}

// extract applies the final-answer rule to a closed question. An explicit
// final answer — a \boxed{} one or one labelled "Final answer" — has equal
// standing whichever form it takes, so two that differ conflict. Without
// one, a labelled answer ("Answer: C") counts, then a standalone option
// line.
func (c choiceSet) extract(raw, field string) Label {
	text, f := finalText(raw)
	if f != nil {
		return Label{Failure: f}.withField(field)
	}
	boxes := boxedContents(text)
	finals := labelled(text, finalKeywords, finalSeparator)
	tiers := []struct {
		name    string
		answers []string
	}{
		{"final answer (boxed or labelled)", append(append([]string(nil), boxes...), finals...)},
		{"labelled answer", labelled(text, answerKeywords, labelSeparator)},
		{"standalone option line", c.standaloneLines(text)},
	}
	var invalid []string
	for i, t := range tiers {
		r := c.tier(t.answers)
		var badBox []string
		if i == 0 {
			badBox = c.tier(boxes).invalid
		}
		switch {
		case r.clash || len(r.values) > 1:
			return fail(Conflicting, field, "%s names more than one option: %s", t.name, quote(strings.Join(t.answers, " | ")))
		case len(r.values) == 1 && len(badBox) > 0:
			return fail(Conflicting, field, "boxed answer %s is not option %s of the final answer", quote(badBox[0]), r.values[0])
		case len(r.values) == 1:
			return valueOf(r.values[0])
		}
		// A box that names nothing valid is an out-of-category answer: a
		// box is the model's final word. A label that names nothing valid
		// leaves lower tiers to find one.
		if len(badBox) > 0 {
			return fail(OutOfCategory, field, "boxed answer %s is not one of %s", quote(badBox[0]), strings.Join(c.values, ", "))
		}
		invalid = append(invalid, r.invalid...)
	}
	if len(answerTokens(text)) == 1 && !strings.ContainsAny(strings.TrimSpace(text), " \n\t") {
		return fail(OutOfCategory, field, "answer %s is not one of %s", quote(text), strings.Join(c.values, ", "))
	}
	if len(invalid) > 0 {
		return fail(OutOfCategory, field, "labelled answer %s is not one of %s", quote(invalid[0]), strings.Join(c.values, ", "))
	}
	return fail(Unparseable, field, "no boxed, labelled or standalone answer among %s in %s", strings.Join(c.values, ", "), quote(text))
}

// Pathology extracts the binary pathology answer of prompts A5 and A11:
// "1" (nasopharyngeal carcinoma) or "0" (not). Anything else — "yes",
// "NPC", "2" — is a failure.
func Pathology(raw string) Label {
	return newChoiceSet([]string{"0", "1"}, nil, false).extract(raw, "pathology")
}

// Sequence extracts the answer to prompt A6. classes are the sequence
// classes in option order (option A is classes[0]; pass imaging.Sequences);
// the model may give the letter or the class name, and the Label's Value is
// the class name.
func Sequence(raw string, classes []string) Label {
	letters := make([]string, len(classes))
	names := make(map[string]string, len(classes))
	for i, cl := range classes {
		letters[i] = string(rune('A' + i))
		names[cl] = letters[i]
	}
	l := newChoiceSet(letters, names, true).extract(raw, "sequence")
	if !l.OK() {
		return l
	}
	for i, letter := range letters {
		if letter == l.Value {
			return valueOf(classes[i])
		}
	}
	return fail(OutOfCategory, "sequence", "option %s has no class", l.Value)
}

// Care extracts the option letter of a CarePath care decision (prompt A13).
// letters are the item's valid option letters ("A".."E"); the Value is one
// of them.
func Care(raw string, letters []string) Label {
	return newChoiceSet(letters, nil, true).extract(raw, "care")
}
