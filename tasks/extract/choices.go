package extract

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Choice extracts the option letter of a single-choice question (prompts
// A1–A4): letters are the item's option letters; the Value is one of them.
// It follows the same rule as a care decision (Care).
func Choice(raw string, letters []string) Label {
	return newChoiceSet(letters, nil, true).extract(raw, "answer")
}

// Choices extracts the answer to a multiple-select question: the set of
// options chosen, its letters in option order joined by "," ("A,C") —
// the form of the item's gold label, so that only the complete reference
// set scores. The same final-answer rule as single choice applies: an
// explicit final answer (boxed or labelled "Final answer") beats a
// labelled one, which beats a line that is only options; two different
// sets at the same level conflict. Within one answer the letters may come
// in any order and be written "A, C", "A and C", "C and A", "A C", "AC",
// "A + C", "A/C", "A、C", "A和C" or as boxes side by side
// ("\boxed{A}\boxed{C}"); the set ends where its answer phrase ends. An
// answer that hedges ("A or C", "A | C", "A或C") conflicts.
func Choices(raw string, letters []string) Label {
	return newChoiceSet(letters, nil, true).extractSet(raw, "answer")
}

// setSeparators may stand between the letters of one set: "A, C", "A、C",
// "A; C", "A & C", "A + C", "(A), (C)", "{A,C}", "$A$, $C$". In a
// multiple-select answer "/" lists too: "A/C/D" is the set {A, C, D}
// (docs/extraction.md).
const setSeparators = " \t*_`\"'“”‘’()[]{}<>,;、，；&+/$"

// hedges join options as alternatives, not as a set.
const hedges = "|"

// phraseEnds end the answer phrase: a sentence end, a colon, a dash. What
// follows is a remark ("A, C, D. E is contraindicated here"), and so is a
// parenthesis that does not hold one option ("B, D (A is reserved for …)").
const phraseEnds = ".。!！?？:：—–-"

// connectives join the letters of a set ("A and C", "A和C", "A与C",
// "A及C", "A以及C"); alternatives hedge between them ("A or C", "A或C").
var (
	connectives  = []string{"and", "和", "与", "及", "以"}
	alternatives = []string{"or", "或"}
	optionWords  = []string{"选", "项"} // 选项 ("option"): "A选项和C选项"
)

// setReader reads one answer as a set of options.
type setReader struct {
	c       choiceSet
	letters []string // distinct valid letters read, in text order
	invalid bool     // a letter that is not an option was read
	hedge   bool     // an alternative ("or", "|") joined two options
	pending bool     // an alternative was read; the next option hedges
}

// matchSet reads one answer string as a set of options. ok is false when
// it names no valid set (no option, or a letter that is not an option);
// conflict is true when it hedges between options. The set is the answer
// phrase at the start: options, connectives and separators up to the end
// of the phrase (phraseEnds) or the first other word, so "A and C,
// because ..." is {A, C} and "A, C, D. E is contraindicated" is {A, C,
// D}; a remark that rejects it ("A is wrong") names none.
func (c choiceSet) matchSet(s string) (set []string, ok, conflict bool) {
	s = cutOptionWord(strings.TrimLeft(strings.TrimSpace(s), decoration))
	r := &setReader{c: c}
	rest := r.read(s, pureList(s))
	switch {
	case r.hedge:
		return nil, false, true
	case r.invalid || len(r.letters) == 0 || negated(rest):
		return nil, false, false
	}
	for _, v := range c.values {
		if slices.Contains(r.letters, v) {
			set = append(set, v)
		}
	}
	return set, true, false
}

// read consumes the set at the start of s and returns what follows it.
// pure says s is nothing but a list of letters, where a lower-case letter
// is an option too (in prose "a" is an article).
func (r *setReader) read(s string, pure bool) string {
	prev := 0
	for _, w := range wordSpans(s) {
		gap := s[prev:w.start]
		if len(r.letters) > 0 && endsPhrase(gap, s[w.start:]) {
			return s[prev:]
		}
		if len(r.letters) > 0 && strings.ContainsAny(gap, hedges) {
			r.pending = true
		}
		if !r.word(s[w.start:w.end], pure) {
			return s[prev:]
		}
		prev = w.end
	}
	return ""
}

// endsPhrase reports whether gap, the text between two words of a set,
// ends the answer phrase; next is the text from the next word on.
func endsPhrase(gap, next string) bool {
	if strings.ContainsAny(gap, phraseEnds) {
		return true
	}
	if !strings.Contains(gap, "(") {
		return false
	}
	// "(A), (C)" lists options; "(A is reserved for …)" is a remark.
	w, after, _ := firstWord(next)
	return utf8.RuneCountInString(w) != 1 || !strings.HasPrefix(after, ")")
}

// word takes one word of the set; false when the word ends the set.
func (r *setReader) word(w string, pure bool) bool {
	switch {
	case foldIn(w, connectives) || foldIn(w, optionWords):
		r.pending = false
		return true
	case foldIn(w, alternatives):
		r.pending = len(r.letters) > 0
		return true
	}
	got, ok := r.options(w, pure)
	if !ok {
		return false
	}
	for _, v := range got {
		if r.pending && !slices.Contains(r.letters, v) {
			r.hedge = true
		}
		if !slices.Contains(r.letters, v) {
			r.letters = append(r.letters, v)
		}
	}
	r.pending = false
	return true
}

// options reads one word as options: "C", "AC" (in a pure list), "A+C+D".
// ok is false when the word is not options; a letter that is no option is
// recorded as invalid.
func (r *setReader) options(w string, pure bool) (got []string, ok bool) {
	parts := strings.Split(w, "+")
	for _, p := range parts {
		n := utf8.RuneCountInString(p)
		single := n == 1 && (pure || len(parts) > 1 || unicode.IsUpper([]rune(p)[0]))
		if !single && !(n > 1 && pure && allUpper(p)) {
			return nil, false
		}
		for _, ch := range p {
			v, found := r.c.byKey[choiceKey(string(ch))]
			if !found {
				r.invalid = r.invalid || unicode.IsLetter(ch)
				return nil, false
			}
			got = append(got, v)
		}
	}
	return got, true
}

// pureList reports whether s is nothing but option-like letters,
// connectives and separators: "A, C", "a and c", "AC", "{A,C}", "A+C".
func pureList(s string) bool {
	spans := wordSpans(s)
	if len(spans) == 0 {
		return false
	}
	prev := 0
	for i, sp := range spans {
		if strings.Trim(s[prev:sp.start], setSeparators+hedges+".。") != "" {
			return false
		}
		prev = sp.end
		w := s[sp.start:sp.end]
		if w == "选" && (i+1 == len(spans) || s[spans[i+1].start:spans[i+1].end] != "项") {
			return false // "选A和C" ("choose A and C") is a conclusion, not a list
		}
		if foldIn(w, connectives) || foldIn(w, alternatives) || foldIn(w, optionWords) {
			continue
		}
		for _, p := range strings.Split(w, "+") {
			if n := utf8.RuneCountInString(p); !(n == 1 && unicode.IsLetter([]rune(p)[0]) || n > 1 && allUpper(p)) {
				return false
			}
		}
	}
	return strings.Trim(s[prev:], setSeparators+hedges+".。") == ""
}

func allUpper(w string) bool {
	for _, r := range w {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// boxRuns returns the boxed answers of a multiple-select text: boxes that
// follow each other with nothing but separators or connectives between
// them ("\boxed{A}\boxed{C}\boxed{D}", "$\boxed{A}$, $\boxed{C}$") are one
// answer, the set of their contents (docs/extraction.md); boxes apart are
// answers of their own.
func boxRuns(text string) []string {
	var runs [][]string
	prev := -1
	for _, b := range boxes(text) {
		if prev >= 0 && runGap(text[prev:b.start]) {
			runs[len(runs)-1] = append(runs[len(runs)-1], b.contents)
		} else {
			runs = append(runs, []string{b.contents})
		}
		prev = b.end
	}
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = strings.Join(r, ",")
	}
	return out
}

// runGap reports whether gap, the text between two boxes, joins them:
// nothing but separators and connectives.
func runGap(gap string) bool {
	const join = " \t$,，、;；&+"
	prev := 0
	for _, w := range wordSpans(gap) {
		if !foldIn(gap[w.start:w.end], connectives) || strings.Trim(gap[prev:w.start], join) != "" {
			return false
		}
		prev = w.end
	}
	return strings.Trim(gap[prev:], join) == ""
}

// setTier is what one tier of evidence says about the chosen set.
type setTier struct {
	sets    [][]string // distinct valid sets, in order of appearance
	invalid []string   // answers that name no valid set
	clash   bool       // an answer hedges between options
}

func (c choiceSet) setTier(answers []string) setTier {
	var t setTier
	for _, a := range answers {
		set, ok, conflict := c.matchSet(a)
		switch {
		case conflict:
			t.clash = true
		case ok:
			if !slices.ContainsFunc(t.sets, func(s []string) bool { return slices.Equal(s, set) }) {
				t.sets = append(t.sets, set)
			}
		default:
			t.invalid = append(t.invalid, strings.TrimSpace(a))
		}
	}
	return t
}

// setLines returns every line that is nothing but options: a list of
// them ("A, C", "**A and C**", "Options: A, C") or one option with its
// explanation, as single choice reads standalone lines ("C. Radiotherapy").
func (c choiceSet) setLines(text string) []string {
	single := c.standaloneLines(text)
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.Trim(line, decoration)
		body := cutOptionWord(line)
		if line != "" && (pureList(body) || slices.Contains(single, line)) {
			out = append(out, line)
		}
	}
	return out
}

// extractSet applies the final-answer rule to a multiple-select question,
// tier by tier as extract does for one option.
func (c choiceSet) extractSet(raw, field string) Label {
	text, f := finalText(raw)
	if f != nil {
		return Label{Failure: f}.withField(field)
	}
	text = normalizeWidth(text)
	boxes := boxRuns(text)
	tiers := []struct {
		name    string
		answers []string
	}{
		{"final answer (boxed or labelled)", append(append([]string(nil), boxes...), labelled(text, finalLabels)...)},
		{"labelled answer", labelled(text, answerLabels)},
		{"line of options", c.setLines(text)},
	}
	var invalid []string
	for i, t := range tiers {
		r := c.setTier(t.answers)
		var badBox []string
		if i == 0 {
			badBox = c.setTier(boxes).invalid
		}
		switch {
		case r.clash || len(r.sets) > 1:
			return fail(Conflicting, field, "%s names more than one set of options: %s", t.name, quote(strings.Join(t.answers, " | ")))
		case len(r.sets) == 1 && len(badBox) > 0:
			return fail(Conflicting, field, "boxed answer %s is not the set %s of the final answer", quote(badBox[0]), strings.Join(r.sets[0], ","))
		case len(r.sets) == 1:
			return valueOf(strings.Join(r.sets[0], ","))
		case len(badBox) > 0:
			return fail(OutOfCategory, field, "boxed answer %s is not a set of %s", quote(badBox[0]), strings.Join(c.values, ", "))
		}
		invalid = append(invalid, r.invalid...)
	}
	if len(invalid) > 0 {
		return fail(OutOfCategory, field, "labelled answer %s is not a set of %s", quote(invalid[0]), strings.Join(c.values, ", "))
	}
	return fail(Unparseable, field, "no boxed, labelled or standalone set of options among %s in %s", strings.Join(c.values, ", "), quote(text))
}
