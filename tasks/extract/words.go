package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The words of an answer. Answers mix English, Chinese and markdown, so a
// word is one of:
//
//   - a Latin word: letters, digits and '_' ("B", "AC"), with a '+' inside
//     it ("T1+C_Ax"), a hyphen inside it when letters stand on both sides
//     ("D-dimer", "C-reactive": a word that begins with an option letter
//     is not that option) and a decimal point between digits ("0.85": a
//     number, not option 0);
//   - one Han character: Chinese is written without spaces, so "答案是B"
//     is the words 答, 案, 是, B and "A和D" is A, 和, D.
//
// Everything else (spaces, punctuation, markdown) stands between words.

// span is one word of a text: text[start:end].
type span struct{ start, end int }

// wordSpans returns the words of s in text order.
func wordSpans(s string) []span {
	var out []span
	for w, ok := nextWord(s, 0); ok; w, ok = nextWord(s, w.end) {
		out = append(out, w)
	}
	return out
}

// nextWord returns the first word of s at or after byte from.
func nextWord(s string, from int) (span, bool) {
	for i := from; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.Is(unicode.Han, r):
			return span{i, i + n}, true
		case latinRune(r):
			return span{i, latinWordEnd(s, i)}, true
		}
		i += max(n, 1)
	}
	return span{}, false
}

// latinRune reports whether r belongs to a Latin word; a '+' belongs to
// one only between two such runes ("T1+C_Ax", but "A + C" is three words).
func latinRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') && !unicode.Is(unicode.Han, r)
}

// latinWordEnd returns where the Latin word starting at s[i] ends.
func latinWordEnd(s string, i int) int {
	prev := rune(0)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[min(i+n, len(s)):])
		switch {
		case latinRune(r):
		case r == '+' && latinRune(prev) && latinRune(next):
		case r == '-' && unicode.IsLetter(prev) && unicode.Is(unicode.Han, next):
			return i + n + utf8.RuneLen(next) // "D-二聚体" (D-dimer): the word "D-二", no option
		case r == '-' && unicode.IsLetter(prev) && unicode.IsLetter(next):
		case r == '.' && unicode.IsDigit(prev) && unicode.IsDigit(next):
		default:
			return i
		}
		prev = r
		i += max(n, 1)
	}
	return i
}

// answerTokens returns the words of s (wordSpans) as strings.
func answerTokens(s string) []string {
	spans := wordSpans(s)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = s[sp.start:sp.end]
	}
	return out
}

// firstWord returns the first word of s and what follows it; ok is false
// when s has no word.
func firstWord(s string) (word, rest string, ok bool) {
	w, ok := nextWord(s, 0)
	return s[w.start:w.end], s[w.end:], ok
}

// Option words: "Option B", "选项B" and "B选项" all name option B.
var (
	optionPrefixes = []string{"options", "option", "选项"}
	optionSuffixes = []string{"选项", "项"}
)

// cutOptionWord removes a leading "Option"/"Options"/"选项" from s.
func cutOptionWord(s string) string {
	for _, p := range optionPrefixes {
		if rest, found := cutFoldPrefix(s, p); found {
			return strings.TrimLeft(rest, decoration)
		}
	}
	return s
}

// cutOptionSuffix removes a "选项" written after an option ("B选项").
func cutOptionSuffix(s string) string {
	for _, p := range optionSuffixes {
		if rest, found := strings.CutPrefix(strings.TrimLeft(s, " "), p); found {
			return rest
		}
	}
	return s
}

// normalizeWidth reads full-width letters, digits and punctuation as their
// ASCII forms (NFKC): "Ｃ" is C, "１" is 1, "：" is ":". Where the paper is
// silent this is the package's decision (docs/extraction.md): a model
// writing Chinese types options in full width, and they are the same
// option.
func normalizeWidth(s string) string {
	return norm.NFKC.String(s)
}

func foldIn(w string, list []string) bool {
	for _, x := range list {
		if strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}

// decoration is what models wrap answers in: markdown emphasis, quotes,
// brackets, trailing punctuation.
const decoration = " \t*_`\"'“”‘’()[]<>#>:;,.!。"

func cutFoldPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
