package extract

import (
	"encoding/json"
	"strings"
)

// foundObject is one JSON object found in an answer, with the byte span
// [start, end) it takes in the text.
type foundObject struct {
	obj        object
	start, end int
}

// objectScan finds the top-level JSON objects of one text in time linear in
// its length, however many '{' it holds (LaTeX \frac{a}{b}, code, a
// degenerate repetition cut off at the token limit), and without a cap that
// could stop the search before the final answer.
//
// Every '{' is a candidate start. A candidate is parsed once, and that one
// parse settles every object it opens on the way: JSON is context-free, so
// the object opened at q parses from q exactly as it does inside the
// enclosing parse — it closes where the enclosing parse closes it, or fails
// where that parse fails while it is open. Only a '{' the parse saw inside
// a string is left for a parse of its own. Two parses that each start
// outside the other's strings therefore never cover the same bytes, and
// there are just two ways of pairing up the quotes of a text, so each byte
// is parsed at most about twice.
//
// The parse checks the JSON grammar only, allocating nothing per byte; a
// span it accepts is decoded by encoding/json, and the fuzz test holds the
// whole search to "parse with encoding/json from every '{'".
type objectScan struct {
	text string
	// settled holds, for each '{' a parse opened after its own start, the
	// end of its object, or -1 when no object starts there; 0 while not
	// settled. It is allocated when first needed.
	settled []int
	// open holds the containers of the parse under way.
	open []container
	// work counts the bytes parsed (tests bound it by the text's length;
	// time is never asserted).
	work int
}

// container is an object or array the parse has opened.
type container struct {
	start  int
	object bool
}

// jsonObjects finds the top-level JSON objects in text: inside ``` fences,
// after prose, or bare. Objects nested in a found object are not reported
// separately. Candidates that do not parse are skipped.
func jsonObjects(text string) []foundObject {
	out, _ := scanObjects(text)
	return out
}

// scanObjects is jsonObjects, also returning the work it did.
func scanObjects(text string) ([]foundObject, int) {
	s := objectScan{text: text}
	var out []foundObject
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		end := s.settledEnd(start)
		if end == 0 {
			end = s.parse(start)
		}
		if end < 0 {
			i = start + 1
			continue
		}
		var obj object
		if err := json.Unmarshal([]byte(text[start:end]), &obj); err == nil {
			out = append(out, foundObject{obj: obj, start: start, end: end})
		}
		// An object too deep for encoding/json is no answer, and neither
		// is anything inside it.
		i = end
	}
	return out, s.work
}

// What the parse expects next.
type expect int

const (
	keyOrClose   expect = iota // after '{'
	key                        // after ',' in an object
	colon                      // after a key
	value                      // after ':', or ',' in an array
	valueOrClose               // after '['
	commaOrClose               // after a value in a container
)

// parse parses the object starting at text[start] and settles it and every
// object the parse opens. It returns the end of the object at start, or -1.
func (s *objectScan) parse(start int) int {
	t := s.text
	s.open = append(s.open[:0], container{start: start, object: true})
	state := keyOrClose
	i := start + 1
	fail := func() int {
		for _, c := range s.open[1:] {
			if c.object {
				s.settle(c.start, -1)
			}
		}
		s.work += i - start + 1
		return -1
	}
	for {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
			i++
		}
		if i >= len(t) {
			return fail()
		}
		c := t[i]
		closes := (c == '}' && (state == keyOrClose || state == commaOrClose && s.top().object)) ||
			(c == ']' && (state == valueOrClose || state == commaOrClose && !s.top().object))
		switch {
		case closes:
			i++
			top := s.top()
			s.open = s.open[:len(s.open)-1]
			if len(s.open) == 0 {
				s.work += i - start
				return i
			}
			if top.object {
				s.settle(top.start, i)
			}
			state = commaOrClose
		case state == keyOrClose || state == key:
			if c != '"' {
				return fail()
			}
			var ok bool
			if i, ok = scanString(t, i); !ok {
				return fail()
			}
			state = colon
		case state == colon:
			if c != ':' {
				return fail()
			}
			i++
			state = value
		case state == commaOrClose:
			if c != ',' {
				return fail()
			}
			i++
			state = value
			if s.top().object {
				state = key
			}
		case c == '{' || c == '[':
			s.open = append(s.open, container{start: i, object: c == '{'})
			i++
			state = valueOrClose
			if c == '{' {
				state = keyOrClose
			}
		default: // a scalar value
			var ok bool
			if i, ok = scanScalar(t, i); !ok {
				return fail()
			}
			state = commaOrClose
		}
	}
}

func (s *objectScan) top() container { return s.open[len(s.open)-1] }

// settle records the end of the object at start (-1: none).
func (s *objectScan) settle(start, end int) {
	if s.settled == nil {
		s.settled = make([]int, len(s.text))
	}
	s.settled[start] = end
}

// settledEnd returns what an earlier parse settled for start: the end of
// its object, -1 for none, 0 when no parse has.
func (s *objectScan) settledEnd(start int) int {
	if s.settled == nil {
		return 0
	}
	return s.settled[start]
}

// scanString scans the JSON string starting at t[i] ('"'). It returns
// where the string ends, or where it turned out invalid and false.
func scanString(t string, i int) (int, bool) {
	for i++; i < len(t); i++ {
		switch c := t[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(t) {
				return i, false
			}
			switch t[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 0; k < 4; k++ {
					if i++; i >= len(t) || !isHex(t[i]) {
						return i, false
					}
				}
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanScalar scans the string, number or literal starting at t[i]. It
// returns where the value ends, or where it turned out invalid and false.
func scanScalar(t string, i int) (int, bool) {
	switch c := t[i]; {
	case c == '"':
		return scanString(t, i)
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(t, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(t[i:], lit) {
			return i + len(lit), true
		}
	}
	return i, false
}

// scanNumber scans the JSON number starting at t[i]: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func scanNumber(t string, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(t) && '0' <= t[i] && t[i] <= '9' {
			i++
		}
		return i
	}
	if t[i] == '-' {
		i++
	}
	switch {
	case i < len(t) && t[i] == '0':
		i++
	case i < len(t) && '1' <= t[i] && t[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(t) && t[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}
