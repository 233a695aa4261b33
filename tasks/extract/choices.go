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
// in any order and be written "A, C", "A and C", "C and A", "A C" or "AC";
// an answer that hedges ("A or C", "A/C") conflicts.
func Choices(raw string, letters []string) Label {
	return newChoiceSet(letters, nil, true).extractSet(raw, "answer")
}

// setSeparators may stand between the letters of one set.
const setSeparators = " \t*_`\"'“”‘’()[]{}<>,;、，；&+.:："

// hedges join options as alternatives, not as a set.
const hedges = "/|"

// connectives join the letters of a set ("A and C"); alternatives hedge
// between them ("A or C").
var (
	connectives  = []string{"and", "和", "及", "以及"}
	alternatives = []string{"or", "或"}
)

// setReader reads one answer as a set of options.
type setReader struct {
	c       choiceSet
	letters []string // distinct valid letters read, in text order
	invalid bool     // a letter that is not an option was read
	hedge   bool     // an alternative ("or", "/") joined two options
	pending bool     // an alternative was read; the next option hedges
}

// matchSet reads one answer string as a set of options. ok is false when
// it names no valid set (no option, or a letter that is not an option);
// conflict is true when it hedges between options. The set is read from
// the start up to the first word that is not an option or a connective,
// so "A and C, because ..." is {A, C}; a remark that rejects it ("A is
// wrong") names none.
func (c choiceSet) matchSet(s string) (set []string, ok, conflict bool) {
	s = strings.TrimLeft(strings.TrimSpace(s), decoration)
	for _, p := range []string{"options", "option"} {
		if rest, found := cutFoldPrefix(s, p); found {
			s = strings.TrimLeft(rest, decoration)
			break
		}
	}
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
	for i := 0; i < len(s); {
		sep := i
		for i < len(s) && !isWordByte(s, i) {
			i += runeLen(s, i)
		}
		if strings.ContainsAny(s[sep:i], hedges) && len(r.letters) > 0 {
			r.pending = true
		}
		j := i
		for j < len(s) && isWordByte(s, j) {
			j += runeLen(s, j)
		}
		if j == i {
			return ""
		}
		if !r.word(s[i:j], pure) {
			return s[sep:]
		}
		i = j
	}
	return ""
}

// word takes one word of the set; false when the word ends the set.
func (r *setReader) word(w string, pure bool) bool {
	switch {
	case foldIn(w, connectives):
		r.pending = false
		return true
	case foldIn(w, alternatives):
		r.pending = len(r.letters) > 0
		return true
	}
	var got []string
	switch n := utf8.RuneCountInString(w); {
	case n == 1 && (pure || unicode.IsUpper([]rune(w)[0])):
		v, found := r.c.byKey[choiceKey(w)]
		if !found {
			if unicode.IsLetter([]rune(w)[0]) {
				r.invalid = true
			}
			return false
		}
		got = []string{v}
	case n > 1 && pure && allUpper(w):
		for _, ch := range w {
			v, found := r.c.byKey[choiceKey(string(ch))]
			if !found {
				r.invalid = true
				return false
			}
			got = append(got, v)
		}
	default:
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

// pureList reports whether s is nothing but option-like letters,
// connectives and separators: "A, C", "a and c", "AC", "{A,C}".
func pureList(s string) bool {
	words := answerTokens(s)
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if foldIn(w, connectives) || foldIn(w, alternatives) {
			continue
		}
		if n := utf8.RuneCountInString(w); n == 1 && unicode.IsLetter([]rune(w)[0]) || n > 1 && allUpper(w) {
			continue
		}
		return false
	}
	return strings.Trim(s, setSeparators+hedges+"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ和及以或") == ""
}

func allUpper(w string) bool {
	for _, r := range w {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

func foldIn(w string, list []string) bool {
	for _, x := range list {
		if strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}

// isWordByte reports whether the rune at s[i] belongs to a word, as
// answerTokens splits them.
func isWordByte(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '+'
}

func runeLen(s string, i int) int {
	_, n := utf8.DecodeRuneInString(s[i:])
	return max(n, 1)
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
		body := line
		for _, p := range []string{"options", "option"} {
			if rest, found := cutFoldPrefix(body, p); found {
				body = strings.TrimLeft(rest, decoration)
				break
			}
		}
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
	boxes := boxedContents(text)
	tiers := []struct {
		name    string
		answers []string
	}{
		{"final answer (boxed or labelled)", append(append([]string(nil), boxes...), labelled(text, finalKeywords, finalSeparator)...)},
		{"labelled answer", labelled(text, answerKeywords, labelSeparator)},
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
