package tasks

import (
	"math"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// Question is a closed-choice question as a prompt shows it: the clinical
// text it is asked about, the question and its options.
type Question struct {
	// Case is the clinical text the question is asked about: an L2
	// vignette, an L4 case at its decision state; empty for L1.
	Case string `json:"case,omitempty"`
	// Baseline, History and Current are an L5 checkpoint's patient as its
	// condition shows it: the baseline findings, the history up to this
	// decision point (in full, as a snapshot, shuffled, or only what is new
	// since the previous turn of a conversation) and the current findings.
	Baseline string           `json:"baseline,omitempty"`
	History  []HistorySection `json:"history,omitempty"`
	Current  string           `json:"current,omitempty"`
	// Text is the question; empty where the prompt asks a fixed one (A4).
	Text    string           `json:"text,omitempty"`
	Options []dataset.Option `json:"options"`
	// Multiple marks a multiple-select question: only the complete set of
	// correct options is credited, and the prompt says so.
	Multiple bool `json:"multiple,omitempty"`
}

// HistorySection is one titled block of a history's lines.
type HistorySection struct {
	Title string   `json:"title"`
	Lines []string `json:"lines"`
}

// NewQuestion is the question of a dataset choice, about the clinical
// text given.
func NewQuestion(c *dataset.Choice, clinical string) *Question {
	return &Question{Case: clinical, Text: c.Question, Options: c.Options, Multiple: c.Multiple}
}

// Letters are the option letters in option order.
func (q *Question) Letters() []string {
	out := make([]string, len(q.Options))
	for i, o := range q.Options {
		out[i] = o.Letter
	}
	return out
}

// Chance is the probability that a uniformly random answer is right: 1/k
// for a single-choice question of k options, 1/(2^k − 1) for a
// multiple-select one (a uniform non-empty subset of its options).
func (q *Question) Chance() float64 {
	k := len(q.Options)
	if k == 0 {
		return 0
	}
	if q.Multiple {
		return 1 / (math.Exp2(float64(k)) - 1)
	}
	return 1 / float64(k)
}
