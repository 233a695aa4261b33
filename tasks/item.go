package tasks

import (
	"iter"
	"slices"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// Item is one scored unit of work: one request to a model and the reference
// answer it is scored against.
type Item struct {
	// ID is unique within a campaign, e.g. "card/P01/cavernous_sinus/left".
	ID string `json:"id"`
	// Task is the key of the item's task in the Registry.
	Task    string `json:"task"`
	Patient string `json:"patient"`
	// Images are the prepared images in request order.
	Images []dataset.Image `json:"images,omitempty"`
	// Planes gives each image's plane ("axial"/"coronal") for plane-group
	// items, so they can be sub-sampled for small-context models.
	Planes []string `json:"planes,omitempty"`
	// Gold is the reference answer.
	Gold Gold `json:"gold"`
	// Care is the care question of a cp_care item, with its episode context.
	Care    *dataset.CareQuestion  `json:"care,omitempty"`
	Context []dataset.ContextEntry `json:"context,omitempty"`
	// Question is a closed-choice item's question as its prompt shows it
	// (L1, L2, L4, L5).
	Question *Question `json:"question,omitempty"`
	// Earlier are the items asked before this one in the same serial
	// conversation, oldest first: its request replays each, followed by
	// the model's own answer to it (the task's Needs lists their ids).
	Earlier []Item `json:"earlier,omitempty"`
	// Group is the item's scoring group: group-macro accuracy averages
	// over groups, and the scores give a table per group. Tags are free
	// labels, each with a table row of its own.
	Group string   `json:"group,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	// Consult is an O1 consultation item's case, question and rubric, and
	// for a judge's item also the response it judges (consult.go).
	Consult *Consult `json:"consult,omitempty"`
	// Excluded items are sent and journaled but never scored.
	Excluded bool `json:"excluded,omitempty"`
}

// ItemSource yields a model's items. The runner reads it once to rank its
// tasks and once per task (longest first), and holds no more of it than
// what is in flight: the requests on the engines, its prefetch channel,
// the item waiting for room in it, and the items waiting for answers they
// include (a care question for its patient's findings, a conversation's
// turn for its earlier turns). A source that
// makes its items as they are asked for thus keeps a run's memory flat
// however many items it has.
type ItemSource interface {
	// Len is how many items Items yields.
	Len() int
	// Items yields the items, in the same order each time it is called.
	Items() iter.Seq[Item]
}

// ItemList is the in-memory ItemSource.
type ItemList []Item

// Len is the number of items.
func (l ItemList) Len() int { return len(l) }

// Items yields the list's items in order.
func (l ItemList) Items() iter.Seq[Item] { return slices.Values(l) }

// Gold is a reference answer. Which fields are set depends on the task:
// Label for pathology (0/1), sequence (class), T/N stage (T1..T4, N0..N3) and
// care (option letter); Structure and Invasion for a card; Invasion for the
// 18 structures (StructureInvasion) on staging items.
type Gold struct {
	Label             string         `json:"label,omitempty"`
	Structure         string         `json:"structure,omitempty"`
	Side              string         `json:"side,omitempty"`
	Invasion          int            `json:"invasion,omitempty"`
	StructureInvasion map[string]int `json:"structure_invasion,omitempty"`
}

// ItemProblem is an item that could not be built, and why. A campaign goes
// on without it and reports it.
type ItemProblem struct {
	Item   string
	Reason string
}

func (p ItemProblem) Error() string { return p.Item + ": " + p.Reason }
