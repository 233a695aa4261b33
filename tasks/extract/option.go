package extract

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
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

// match maps one answer string to a value. ok is false when s does not name
// a valid choice; conflict is true when it names two ("A or B", "A, C").
// An option followed by a remark is that option: "1 (confidence 0.9)",
// "C (T1+C_Ax), not A", "B because the CSF is bright", "B，因为…".
func (c choiceSet) match(s string) (value string, ok, conflict bool) {
	s = strings.TrimSpace(s)
	if v, found := c.byKey[choiceKey(strings.Trim(s, decoration))]; found {
		return v, true, false
	}
	s = cutOptionWord(strings.TrimLeft(s, decoration))
	word, rest, found := firstWord(s)
	if !found {
		return "", false, false
	}
	v, found := c.byKey[choiceKey(word)]
	if !found || (len(wordSpans(rest)) > 0 && !c.standaloneToken(word)) {
		return "", false, false
	}
	switch rest = cutOptionSuffix(rest); {
	case !c.letter && startsNumber(rest):
		return "", false, false // "0,9" is a number, not option 0
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

// listSeparators join two answers: "A/B", "A, C", "A; C", "A | B", "A & B",
// "A、C".
const listSeparators = " \t*_`\"'“”‘’,;/|&+、"

// listWords join two answers as a list ("A and C", "A和C") or as
// alternatives ("A or C", "A或C").
var listWords = []string{"or ", "and ", "vs ", "vs. ", "versus ", "或", "和", "与", "及", "以及"}

// listsAnother reports whether rest, the text after an answer's option,
// gives a second, different option as an answer too: straight after it
// ("A/B", "A, C", "A and C", "A和C", "A B") or after an "or" ("B or maybe
// C"). A remark that only mentions another option ("C, not A", "1
// (confidence 0.9)") lists none.
func (c choiceSet) listsAnother(rest, v string) bool {
	r := strings.TrimLeft(rest, listSeparators)
	for _, word := range listWords {
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

// A label is a keyword, then a separator within a few bytes: "Final
// answer: C", "Final answers: A, C", "**Answer:** C", "The answer is C",
// "The correct answers are A and C", "答案：C", "答案是C", "正确答案为C",
// "最终答案：C". Without a separator there is no label, so "To answer this
// question" is none. Keywords are found with strings.Index and the
// separator is matched anchored right after them: a regexp scanning all of
// a long reasoning text costs milliseconds.
var (
	englishSeparator = regexp.MustCompile(`^["']?\s*(?:\*\*|__)?\s*(?:is\s*:?|:|：|=)`)
	// answersSeparator also reads the plural "answers are" / "answers:"
	// (and "correct options are"); "The options are A. Surgery, B. …"
	// restates the options and is no label.
	answersSeparator = regexp.MustCompile(`^s?["']?\s*(?:\*\*|__)?\s*(?:is\s*:?|are\s*:?|:|：|=)`)
	finalSeparator   = regexp.MustCompile(`^\s+answers?\s*(?:\*\*|__)?\s*(?:is\s*:?|are\s*:?|:|：|=|-)`)
	// chineseSeparator: 是 ("is"), 为 ("is", formal), 选 ("choose"),
	// optionally after 应该/应/就 ("should be"), a colon, or the bracket
	// of an exam key ("【答案】B").
	chineseSeparator = regexp.MustCompile(`^\s*(?:\*\*|__)?\s*(?:(?:应该|应当|应|就)?\s*(?:是|为|选)\s*(?:\*\*|__)?\s*[:：]?|[:：]|】\s*[:：]?)`)
)

// labelRule is one keyword and the separator that must follow it.
type labelRule struct {
	keyword string
	sep     *regexp.Regexp
}

// finalLabels are the labels of a final answer, of the same standing as a
// \boxed{} one: "Final answer" and its Chinese twin 最终答案.
var finalLabels = []labelRule{{"final", finalSeparator}, {"最终答案", chineseSeparator}}

// answerLabels are the labels of a plain answer: "Answer", "Option",
// "Choice", "The correct options are", and 答案 ("answer"), 答 (its short
// form, "答：B"), 选项 ("option"), 选择 ("choice").
var answerLabels = []labelRule{
	{"answer", answersSeparator}, {"option", englishSeparator}, {"choice", englishSeparator},
	{"correct option", answersSeparator},
	{"答案", chineseSeparator}, {"答", chineseSeparator}, {"选项", chineseSeparator}, {"选择", chineseSeparator},
}

// labelWindow bounds how far after a keyword its separator may end.
const labelWindow = 24

// labelHit is one label in a text: the keyword starts at start and the
// separator ends at end.
type labelHit struct{ start, end int }

// labelHits returns the labels of text in text order: each keyword followed
// by its separator. Matching ignores ASCII case.
func labelHits(text string, rules []labelRule) []labelHit {
	lower := asciiLower(text)
	var hits []labelHit
	for _, rule := range rules {
		for from := 0; ; {
			i := strings.Index(lower[from:], rule.keyword)
			if i < 0 {
				break
			}
			at := from + i + len(rule.keyword)
			from = at
			window := lower[at:min(len(lower), at+labelWindow)]
			if loc := rule.sep.FindStringIndex(window); loc != nil {
				hits = append(hits, labelHit{at - len(rule.keyword), at + loc[1]})
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	return hits
}

// labelEnds returns where each label of text ends, in text order.
func labelEnds(text string, rules []labelRule) []int {
	hits := labelHits(text, rules)
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
func labelled(text string, rules []labelRule) []string {
	hits := labelHits(text, rules)
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
// "C", "**C**", "(C)", "Option C", "选项C", "C选项", "T1+C_Ax", or an
// option followed by its explanation after a separator ("C. T1+C_Ax", "A)
// Concurrent chemoradiotherapy", "0 (normal tissue)") that names no other
// option. Numbered-list lines ("1. The slide shows") are not options for
// the 0/1 questions: only "(", ":" and dashes separate an explanation
// there. A word that begins with an option letter ("D-dimer was 4.2 mg/L")
// is a word, not the option.
//
// The paper accepts a standalone option "when unambiguous". A line that
// quotes an option is not the model's answer when the model goes on to
// conclude with another option: a later line of prose that ends with a
// different option ("B. Radiotherapy alone would undertreat N2 disease"
// … "So I'd go with C") leaves B ambiguous. The conclusion itself is no
// answer either (an unlabelled conclusion stays unread; docs/extraction.md).
func (c choiceSet) standaloneLines(text string) []string {
	lines := strings.Split(text, "\n")
	later := c.laterConclusions(lines)
	var out []string
	for i, line := range lines {
		line = strings.Trim(line, decoration)
		v, ok := c.optionLine(line)
		if !ok || slices.ContainsFunc(later[i], func(w string) bool { return w != v }) {
			continue
		}
		out = append(out, line)
	}
	return out
}

// optionLine reads one line (decoration trimmed) as a standalone option;
// ok is false when it is not one.
func (c choiceSet) optionLine(line string) (value string, ok bool) {
	if line == "" {
		return "", false
	}
	if v, found := c.byKey[choiceKey(line)]; found {
		return v, true
	}
	rest := strings.TrimLeft(cutOptionWord(line), " *_")
	word, after, found := firstWord(rest)
	if !found || !strings.HasPrefix(rest, word) {
		return "", false
	}
	v, found := c.byKey[choiceKey(word)]
	if !found || !c.standaloneToken(word) {
		return "", false
	}
	after = strings.TrimLeft(cutOptionSuffix(after), " *_")
	switch {
	case after == "":
		return v, true
	case strings.HasPrefix(after, "/") || strings.HasPrefix(strings.ToLower(after), "or "):
		return v, true // "0 or 1": match reports the conflict
	}
	seps := "(:-–—"
	if c.letter {
		seps = ".):-–—"
	}
	if r, _ := utf8.DecodeRuneInString(after); !strings.ContainsRune(seps, r) {
		return "", false
	}
	for _, t := range answerTokens(after) {
		if w, other := c.byKey[choiceKey(t)]; other && w != v && c.standaloneToken(t) {
			return "", false // names another option: ambiguous
		}
	}
	return v, true
}

// laterConclusions returns, for each line, the options that a later line
// of prose concludes with ("So I'd go with C"): a line that is not itself
// an option line and whose last word is an option letter (concludes). Only
// letter options conclude; in prose a digit is more often a number than
// option 0 or 1, and a class name is as often rejected as chosen.
func (c choiceSet) laterConclusions(lines []string) [][]string {
	out := make([][]string, len(lines))
	if !c.letter {
		return out
	}
	var seen []string
	for i := len(lines) - 1; i >= 0; i-- {
		out[i] = seen
		line := strings.Trim(lines[i], decoration)
		if _, isOption := c.optionLine(line); isOption {
			continue
		}
		if v, found := c.concludes(line); found && !slices.Contains(seen, v) {
			seen = append(slices.Clip(seen), v)
		}
	}
	return out
}

// contrasts are words after which an option is set against another, not
// chosen: "better than C", "not C", "instead of C", "而不是C", "优于C".
var contrasts = []string{"not", "than", "over", "of", "vs", "versus", "unlike", "except", "against", "excluding", "非", "于"}

// concludes returns the option letter a line of prose ends with ("So I'd
// go with C", "我会选择C"); found is false when it ends otherwise or sets
// the letter against another ("rather than C").
func (c choiceSet) concludes(line string) (value string, found bool) {
	words := answerTokens(line)
	if len(words) < 2 {
		return "", false
	}
	last, before := words[len(words)-1], words[len(words)-2]
	notIs := before == "是" && len(words) > 2 && words[len(words)-3] == "不" // 不是C: "not C"
	if utf8.RuneCountInString(last) != 1 || !c.standaloneToken(last) || foldIn(before, contrasts) || notIs {
		return "", false
	}
	value, found = c.byKey[choiceKey(last)]
	return value, found
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
	text = normalizeWidth(text)
	boxes := boxedContents(text)
	finals := labelled(text, finalLabels)
	tiers := []struct {
		name    string
		answers []string
	}{
		{"final answer (boxed or labelled)", append(append([]string(nil), boxes...), finals...)},
		{"labelled answer", labelled(text, answerLabels)},
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
