package tasks

import (
	"fmt"
	"iter"
	"sort"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// BuildSimKey writes the answer key of every item as the model's requests
// will show it (after image sub-sampling): each task's Sim says how its
// requests are recognised and answered.
//
// The engine answers a request by the first entry that recognises it, so
// an entry comes before those whose text its requests may contain: the
// later turns of a conversation before the earlier ones they replay, then
// the entries that ask more text before those that ask less (specificity).
func BuildSimKey(reg *Registry, b RequestBuilder, prompts *Prompts, items iter.Seq[Item]) (*simkey.Key, error) {
	key := &simkey.Key{Format: simkey.Format}
	var turns []int
	for it := range items {
		e, err := simEntry(reg, b, prompts, it)
		if err != nil {
			return nil, err
		}
		key.Items = append(key.Items, e)
		turns = append(turns, len(it.Earlier))
		if task, _ := reg.Task(it.Task); task.Sim.More != nil {
			for _, more := range task.Sim.More(it) {
				key.Items = append(key.Items, more)
				turns = append(turns, len(it.Earlier))
			}
		}
	}
	order := make([]int, len(key.Items))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if turns[i] != turns[j] {
			return turns[i] > turns[j]
		}
		return specificity(key.Items[i]) > specificity(key.Items[j])
	})
	sorted := make([]simkey.Item, len(order))
	for k, i := range order {
		sorted[k] = key.Items[i]
	}
	key.Items = sorted
	return key, nil
}

// specificity is how much text an entry asks a request to hold: an entry
// that asks more goes first, so that it is not shadowed by one whose text
// its requests also hold (an O1 judge's entry by its item's, a reference
// prompt by the clinical part it shares with an own-findings prompt).
func specificity(e simkey.Item) int {
	n := len(e.Contains)
	for _, a := range e.Also {
		n += len(a)
	}
	return n
}

// simEntry is the sim key entry of one item.
func simEntry(reg *Registry, b RequestBuilder, prompts *Prompts, it Item) (simkey.Item, error) {
	task, err := reg.Task(it.Task)
	if err != nil {
		return simkey.Item{}, fmt.Errorf("sim key: item %s: %w", it.ID, err)
	}
	imgs, err := b.Images(it)
	if err != nil {
		return simkey.Item{}, err
	}
	hashes := make([]string, len(imgs))
	for i, img := range imgs {
		hashes[i] = img.SHA256
	}
	e := simkey.Item{ID: it.ID, Images: simkey.Fingerprint(hashes), Contains: task.Sim.Marker}
	if task.Sim.Recognise != nil {
		// Prior lines that need no answer (reference findings, supplied
		// fields) are the same for every model: the prompt has them.
		var prior []string
		if task.Prior != nil && len(reg.Needs(it)) == 0 {
			prior = task.Prior(it, nil)
		}
		p, err := prompts.Render(it, prior)
		if err != nil {
			return simkey.Item{}, err
		}
		e.Contains = task.Sim.Recognise(it, p)
	}
	a := task.Sim.Answers(it)
	e.Right, e.Wrong, e.Constant, e.Parts, e.Verdict = a.Right, a.Wrong, a.Constant, a.Parts, a.Verdict
	return e, nil
}
