package extract

import "fmt"

// FailureKind names why no answer could be extracted. A failure is scored
// wrong and stays in every denominator.
type FailureKind string

// The failure kinds.
const (
	// Empty: no final text at all (or only reasoning).
	Empty FailureKind = "empty"
	// Unparseable: text without a recognisable answer (no option, no JSON
	// object, malformed JSON).
	Unparseable FailureKind = "unparseable"
	// OutOfCategory: an answer was given but is not one of the allowed
	// categories ("T3a", "stage III", an option letter not offered,
	// invasion "yes", an unknown structure).
	OutOfCategory FailureKind = "out_of_category"
	// Conflicting: two different final answers of equal standing.
	Conflicting FailureKind = "conflicting"
	// MissingField: the JSON answer lacks a required field.
	MissingField FailureKind = "missing_field"
)

// Failure is a typed extraction failure. Field names the answer field it
// concerns ("t_stage", "structure_invasion.clivus"); Detail quotes what was
// found so a reader of the report can see why.
type Failure struct {
	Kind   FailureKind `json:"kind"`
	Field  string      `json:"field,omitempty"`
	Detail string      `json:"detail,omitempty"`
}

// Error implements error.
func (f *Failure) Error() string {
	if f.Field != "" {
		return fmt.Sprintf("%s: %s: %s", f.Field, f.Kind, f.Detail)
	}
	return fmt.Sprintf("%s: %s", f.Kind, f.Detail)
}

// Label is one extracted categorical answer: exactly one of Value (a valid
// category) and Failure is set. Extractors never return the zero Label,
// which holds neither; it is never OK, so scoring counts it wrong.
type Label struct {
	Value   string   `json:"value,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
}

// OK reports whether the label holds a valid category.
func (l Label) OK() bool { return l.Failure == nil && l.Value != "" }

// Is reports whether the label holds exactly the given category; a failure
// is never equal to anything.
func (l Label) Is(value string) bool { return l.OK() && l.Value == value }

func valueOf(v string) Label { return Label{Value: v} }

func fail(kind FailureKind, field, format string, args ...any) Label {
	return Label{Failure: &Failure{Kind: kind, Field: field, Detail: fmt.Sprintf(format, args...)}}
}

// withField returns a copy of l whose failure (if any) names field.
func (l Label) withField(field string) Label {
	if l.Failure == nil {
		return l
	}
	f := *l.Failure
	f.Field = field
	return Label{Failure: &f}
}

// quote shortens s for a failure detail.
func quote(s string) string {
	const max = 60
	r := []rune(s)
	if len(r) > max {
		return fmt.Sprintf("%q…", string(r[:max]))
	}
	return fmt.Sprintf("%q", s)
}
