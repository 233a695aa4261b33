package campaign

import (
	"iter"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
)

// workload estimates a model's work from its items: about 1,000 tokens an
// image (a 512×1644 plane group is 800–1,100 for the paper's models), the
// prompt text at 4 characters a token, and the output budget.
func workload(m configs.Model, items iter.Seq[tasks.Item], repeats int) []schedule.Workload {
	byTask := map[string]*schedule.Workload{}
	var order []string
	for it := range items {
		w, ok := byTask[it.Task]
		if !ok {
			w = &schedule.Workload{Model: m.Name, Task: it.Task}
			byTask[it.Task] = w
			order = append(order, it.Task)
		}
		imgs := it.Images
		if lim := m.Tasks[it.Task].MaxImages; lim > 0 && len(imgs) > lim {
			imgs = imgs[:lim] // the sub-sample's size; which ones does not matter here
		}
		var pixels int64
		for _, img := range imgs {
			pixels += int64(img.Width) * int64(img.Height)
		}
		r := int64(repeats)
		w.Requests += repeats
		w.Images += r * int64(len(imgs))
		w.ImagePixels += r * pixels
		w.PromptTokens += r * int64(len(imgs)*1000+500)
		// The whole output budget, as the paper-scale estimate counts it.
		w.OutputTokens += r * int64(m.Tasks[it.Task].MaxTokens)
	}
	out := make([]schedule.Workload, 0, len(order))
	for _, task := range order {
		out = append(out, *byTask[task])
	}
	return out
}
