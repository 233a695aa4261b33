package npcbench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/synth"
)

// textDataset is the synthetic text levels (no patient, so no image).
func textDataset(t *testing.T) *dataset.Raw {
	t.Helper()
	opt := synth.DefaultOptions(filepath.Join(t.TempDir(), "data"))
	opt.Patients, opt.CarePath = 0, 0
	raw, err := synth.Generate(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// requestText is a request's text as the simulated engine reads it: every
// text of every message, joined by "\n"; an earlier turn is answered right.
func requestText(t *testing.T, reg *tasks.Registry, prompts *tasks.Prompts, it tasks.Item) string {
	t.Helper()
	var parts []string
	for _, e := range it.Earlier {
		task, _ := reg.Task(e.Task)
		p, err := prompts.Render(e, nil)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p, task.Sim.Answers(e).Right)
	}
	p, err := prompts.Render(it, nil)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(append(parts, p), "\n")
}

// Every text item's request is recognised by the simulated engine as its
// own, never as another item's: the L5 conditions ask the same question
// over the same records, and a serial turn replays the turns before it.
func TestSimKeyRecognisesEveryTextRequestAsItsOwn(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	raw := textDataset(t)
	keys := []string{GMem, AApp, CPlan, LRevControls}
	items, problems, err := tasks.BuildItems(reg, raw, &dataset.Prepared{}, keys)
	if err != nil || len(problems) > 0 {
		t.Fatalf("problems %v, err %v", problems, err)
	}
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	models, _ := configs.DefaultRegistry()
	m, _ := models.Get("Lingshu-7B")
	key, err := tasks.BuildSimKey(reg, tasks.RequestBuilder{Model: m, Media: configs.MediaBase64}, prompts, tasks.ItemList(items).Items())
	if err != nil {
		t.Fatal(err)
	}
	perTask := map[string]int{}
	for _, it := range items {
		perTask[it.Task]++
		if got := key.Match("", requestText(t, reg, prompts, it)); got == nil || got.ID != it.ID {
			t.Errorf("the request of %s is recognised as %v", it.ID, got)
		}
	}
	for _, k := range []string{GMem, AApp, CPlan, LRev, LRevSnapshot, LRevShuffled, LRevSerial} {
		if perTask[k] < 20 {
			t.Errorf("%s: %d items, want a few dozen", k, perTask[k])
		}
	}
}
