package campaign

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

// TestModelItemsFilterTheCampaignsItemsWithoutCopying checks a model's
// item source: the campaign's items of the model's tasks, in order, as
// often as asked, made by filtering the campaign's list as it is read.
func TestModelItemsFilterTheCampaignsItemsWithoutCopying(t *testing.T) {
	var all []tasks.Item
	for i := range 300 {
		task := []string{npcbench.Pathology, npcbench.Sequence, npcbench.CPCare}[i%3]
		all = append(all, tasks.Item{ID: fmt.Sprintf("%s/P%03d", task, i), Task: task})
	}
	m := configs.Model{Name: "M", Tasks: map[string]configs.TaskSettings{npcbench.Pathology: {}, npcbench.CPCare: {}}}
	src := itemsFor(all, m)
	var want []string
	for _, it := range all {
		if it.Task != npcbench.Sequence {
			want = append(want, it.ID)
		}
	}
	for pass := range 2 {
		var got []string
		for it := range src.Items() {
			got = append(got, it.ID)
		}
		if !slices.Equal(got, want) || src.Len() != len(want) {
			t.Fatalf("pass %d: %d items (Len %d), want the %d pathology and care items in order", pass+1, len(got), src.Len(), len(want))
		}
	}
	// Stopping early is allowed.
	for it := range src.Items() {
		if it.ID != want[0] {
			t.Fatalf("first item %s, want %s", it.ID, want[0])
		}
		break
	}
	// A pass allocates nothing that grows with the items: no per-model copy.
	var n int
	if allocs := testing.AllocsPerRun(10, func() {
		for range src.Items() {
			n++
		}
	}); allocs > 2 {
		t.Errorf("a pass over 200 items made %.0f allocations; want a filter, not a copy", allocs)
	}
}

// BenchmarkCampaignItemMemory measures what a campaign holds for its items
// while it runs: the loaded dataset (dataset.json and the prepared
// manifest), then the item list BuildItems makes of it, which is all that
// stays once the dataset is dropped. It runs over the package's fixture,
// or over the dataset in $NPCORCH_BENCH_DATA and $NPCORCH_BENCH_PREP.
//
//	go test ./tasks/campaign -run '^$' -bench CampaignItemMemory -benchtime 1x
func BenchmarkCampaignItemMemory(b *testing.B) {
	data, prepDir := os.Getenv("NPCORCH_BENCH_DATA"), os.Getenv("NPCORCH_BENCH_PREP")
	if data == "" || prepDir == "" {
		data, prepDir = fixture(b)
	}
	st := configs.DefaultStructures()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // sync.Pool victims outlive one collection
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	for b.Loop() {
		h0 := heap()
		raw, err := dataset.LoadRaw(data, st.IDs())
		var problems dataset.Problems
		if err != nil && !errors.As(err, &problems) {
			b.Fatal(err)
		}
		prep, err := dataset.LoadPrepared(prepDir)
		if err != nil {
			b.Fatal(err)
		}
		h1 := heap()
		items, _, err := tasks.BuildItems(Benchmark(), raw, prep, nil)
		if err != nil {
			b.Fatal(err)
		}
		h2 := heap()
		runtime.KeepAlive(raw)
		runtime.KeepAlive(prep)
		h3 := heap() // the dataset is dropped; the items keep what they share of it
		runtime.KeepAlive(items)
		n, imgs := float64(len(items)), 0
		for _, it := range items {
			imgs += len(it.Images)
		}
		b.ReportMetric(n, "items")
		b.ReportMetric(float64(imgs), "item-images")
		b.ReportMetric(float64(h1-min(h0, h1)), "dataset-B")
		b.ReportMetric(float64(h2-min(h1, h2)), "items-over-dataset-B")
		b.ReportMetric(float64(h3-min(h0, h3))/n, "held-B/item")
	}
}

// TestMaxImagesCountsOnlyTheModelsTasks: the image limit an engine is
// started with comes from the items its model is asked, capped by the
// model's max_images, not from every task of the campaign.
func TestMaxImagesCountsOnlyTheModelsTasks(t *testing.T) {
	img := func(n int) []dataset.Image { return make([]dataset.Image, n) }
	items := []tasks.Item{
		{ID: "pathology/P1", Task: npcbench.Pathology, Images: img(1)},
		{ID: "sequence/P1", Task: npcbench.Sequence, Images: img(9)},
		{ID: "t_groups/P1", Task: npcbench.TGroups, Images: img(80)},
	}
	m := configs.Model{Name: "m", Tasks: map[string]configs.TaskSettings{npcbench.Pathology: {}, npcbench.Sequence: {}}}
	if got := maxImages(m, items); got != 9 {
		t.Errorf("model without t_groups: max images %d, want 9 (its sequence panels)", got)
	}
	m.Tasks[npcbench.TGroups] = configs.TaskSettings{MaxImages: 35}
	if got := maxImages(m, items); got != 35 {
		t.Errorf("model with t_groups capped at 35: max images %d, want 35", got)
	}
	m.Tasks[npcbench.TGroups] = configs.TaskSettings{}
	if got := maxImages(m, items); got != 80 {
		t.Errorf("model with t_groups uncapped: max images %d, want 80", got)
	}
}

// TestDatasetWorkloadsAskTextModelsNoImageTask: counted in a prepared
// dataset, a text-only model's work holds no item of a task that shows
// images or builds on answers about them (all of L3 and L6), while the
// image model beside it is asked every item, images included.
func TestDatasetWorkloadsAskTextModelsNoImageTask(t *testing.T) {
	data, prepDir := fixture(t)
	c, err := configs.ParseCampaign("mixed.yaml", t.TempDir(), []byte(fmt.Sprintf(`
name: mixed
node: fake:a800-sxm-8
output: run
dataset: {raw: %q, prepared: %q}
models:
  - {name: Lingshu-7B, engine: {kind: sim}}
  - {name: Text-7B, params_b: 7, text_only: true, engine: {kind: sim}}
`, data, prepDir)), nil)
	if err != nil {
		t.Fatal(err)
	}
	wls, _, err := DatasetWorkloads(c)
	if err != nil {
		t.Fatal(err)
	}
	reg := Benchmark()
	byModel := map[string][]string{}
	images := map[string]int64{}
	for _, w := range wls {
		byModel[w.Model] = append(byModel[w.Model], w.Task)
		images[w.Model] += w.Images
	}
	for _, task := range byModel["Text-7B"] {
		tk, err := reg.Task(task)
		if err != nil || tk.Level == "L3" || tk.Level == "L6" {
			t.Errorf("text-only model asked %s (%v)", task, err)
		}
	}
	if images["Text-7B"] != 0 {
		t.Errorf("text-only model sends %d images", images["Text-7B"])
	}
	var every []string // the default task list: every task but the matched controls and the judges'
	for _, tk := range reg.Tasks() {
		if !tk.Control && tk.Judges == "" {
			every = append(every, tk.Key)
		}
	}
	if !slices.Equal(byModel["Lingshu-7B"], every) || images["Lingshu-7B"] == 0 {
		t.Errorf("image model asked %v with %d images, want every task but the controls and the judges' (%v) with images", byModel["Lingshu-7B"], images["Lingshu-7B"], every)
	}
}
