package tasks

import (
	"fmt"
	"iter"

	"github.com/npcorch/npcorch/launcher/simkey"
)

// BuildSimKey writes the answer key of every item as the model's requests
// will show it (after image sub-sampling): each task's Sim says how its
// requests are recognised and answered.
func BuildSimKey(reg *Registry, b RequestBuilder, prompts *Prompts, items iter.Seq[Item]) (*simkey.Key, error) {
	key := &simkey.Key{Format: simkey.Format}
	for it := range items {
		e, err := simEntry(reg, b, prompts, it)
		if err != nil {
			return nil, err
		}
		key.Items = append(key.Items, e)
		if task, _ := reg.Task(it.Task); task.Sim.More != nil {
			key.Items = append(key.Items, task.Sim.More(it)...)
		}
	}
	return key, nil
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
		p, err := prompts.Render(it, nil)
		if err != nil {
			return simkey.Item{}, err
		}
		e.Contains = task.Sim.Recognise(it, p)
	}
	a := task.Sim.Answers(it)
	e.Right, e.Wrong, e.Constant, e.Parts, e.Verdict = a.Right, a.Wrong, a.Constant, a.Parts, a.Verdict
	return e, nil
}
