package tasks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

func TestBuildSubsamplesPlaneGroupsToTheModelsLimit(t *testing.T) {
	root := t.TempDir()
	var imgs []dataset.Image
	var planes []string
	for i := 0; i < 12; i++ {
		imgs = append(imgs, writeImage(t, root, fmt.Sprintf("g%02d.png", i), []byte(fmt.Sprintf("group %d", i))))
		planes = append(planes, map[bool]string{true: "axial", false: "coronal"}[i < 8])
	}
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("InternVL3.5-38B")
	model.Tasks[npcbench.TGroups] = configs.TaskSettings{MaxTokens: 10, MaxImages: 6}
	prompts, _ := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	it := tasks.Item{ID: "t_groups/P1", Task: npcbench.TGroups, Images: imgs, Planes: planes}
	req, err := tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}.Build(prompts, it, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, img := range req.Images {
		got = append(got, img.Path)
	}
	// 8 axial and 4 coronal into 6: 4 + 2, both ends of each plane kept.
	want := []string{"g00.png", "g02.png", "g05.png", "g07.png", "g08.png", "g11.png"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sent %v, want %v", got, want)
	}
	if n := len(req.Body.Messages[0].MultiContent); n != 7 {
		t.Errorf("%d message parts, want the prompt and 6 images", n)
	}
	it.Planes = nil
	if _, err := (tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}).Build(prompts, it, 0, nil); err == nil ||
		!strings.Contains(err.Error(), "raise tasks.t_groups.max_images") {
		t.Errorf("too many non-group images: err = %v", err)
	}
}

func TestSplitReasoning(t *testing.T) {
	cases := []struct{ content, field, answer, thought string }{
		{"\\boxed{A}", "", "\\boxed{A}", ""},
		{"<think>T1 is bright fat</think>\n\\boxed{A}", "", "\\boxed{A}", "T1 is bright fat"},
		{"  <think>a</think>b", "field", "b", "field\na"},
		{"so it is T1</think>\\boxed{A}", "", "\\boxed{A}", "so it is T1"},
		{"<think>never closed \\boxed{B}", "", "", "never closed \\boxed{B}"},
		{"{\"n_stage\":\"N1\"}", "long reasoning", "{\"n_stage\":\"N1\"}", "long reasoning"},
	}
	for _, c := range cases {
		a, th := inference.SplitReasoning(c.content, c.field)
		if a != c.answer || th != c.thought {
			t.Errorf("SplitReasoning(%q, %q) = %q, %q; want %q, %q", c.content, c.field, a, th, c.answer, c.thought)
		}
	}
}

func TestLoadPromptsFromAUserFolder(t *testing.T) {
	dir := t.TempDir()
	for _, task := range benchmark().Keys() {
		os.WriteFile(filepath.Join(dir, task+".tmpl"), []byte("custom "+task+" with {{len .Structures}} structures"), 0o644)
	}
	p, err := tasks.LoadPrompts(os.DirFS(dir), ".", benchmark())
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Render(tasks.Item{ID: "card/P1", Task: npcbench.Card}, nil)
	if err != nil || got != "custom card with 18 structures" {
		t.Fatalf("Render = %q, %v", got, err)
	}
	os.Remove(filepath.Join(dir, "cp_care.tmpl"))
	if _, err := tasks.LoadPrompts(os.DirFS(dir), ".", benchmark()); err == nil || !strings.Contains(err.Error(), "prompt for task cp_care") {
		t.Fatalf("missing template: err = %v", err)
	}
}

// TestAPIModelRequestsCarryTheEndpointsModelID: an external model's
// requests name the endpoint's model id (engine.api_model), while the
// journal key keeps the registry name, so journals written before the
// field existed resume without re-asking anything.
func TestAPIModelRequestsCarryTheEndpointsModelID(t *testing.T) {
	root := t.TempDir()
	img := writeImage(t, root, "o.png", []byte("png"))
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("GPT-4.1")
	prompts, _ := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	it := tasks.Item{ID: "cp_pathology/P1", Task: npcbench.CPPathology, Images: []dataset.Image{img}}
	req, err := tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}.Build(prompts, it, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Body.Model != "gpt-4.1" {
		t.Errorf("request names model %q, want the endpoint's id gpt-4.1", req.Body.Model)
	}
	model.Engine.APIModel = ""
	plain, err := tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}.Build(prompts, it, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Body.Model != "GPT-4.1" || plain.Key != req.Key {
		t.Errorf("without api_model: model %q, key %s vs %s; want the registry name and the same journal key", plain.Body.Model, plain.Key, req.Key)
	}
}

// An item's request for another repeat, made from one built for the first
// (the runner builds an item that needs no other answer once), is the
// request Build makes for that repeat: same body, images and inline
// files, that repeat's number and key.
func TestForRepeatIsTheRepeatsOwnRequest(t *testing.T) {
	root := t.TempDir()
	var imgs []dataset.Image
	for i := range 3 {
		imgs = append(imgs, writeImage(t, root, fmt.Sprintf("g%d.png", i), []byte(fmt.Sprintf("group %d", i))))
	}
	reg, _ := configs.DefaultRegistry()
	prompts, _ := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	for _, c := range []struct {
		model string
		media configs.MediaMode
		it    tasks.Item
	}{
		{"Qwen3-VL-8B-Instruct", configs.MediaFile, tasks.Item{ID: "t_groups/P1", Task: npcbench.TGroups, Images: imgs, Planes: []string{"axial", "axial", "coronal"}}},
		{"InternVL3.5-38B", configs.MediaBase64, tasks.Item{ID: "cp_pathology/P1", Task: npcbench.CPPathology, Images: imgs[:1]}},
	} {
		model, _ := reg.Get(c.model)
		b := tasks.RequestBuilder{Model: model, Media: c.media, Root: root}
		first, err := b.Build(prompts, c.it, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]int{first.Key: 0}
		for _, rep := range []int{1, 4} {
			want, err := b.Build(prompts, c.it, rep, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := first.ForRepeat(rep)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: ForRepeat(%d) = %+v\nwant Build's %+v", c.model, c.it.ID, rep, got, want)
			}
			if other, ok := keys[got.Key]; ok {
				t.Errorf("%s: repeat %d has the key of repeat %d", c.it.ID, rep, other)
			}
			keys[got.Key] = rep
		}
		if first.Repeat != 0 {
			t.Errorf("ForRepeat changed the request it was made from: repeat %d", first.Repeat)
		}
	}
	// A request made by hand has no key inputs: refused, not keyed wrong.
	if _, err := (&tasks.Request{Item: tasks.Item{ID: "x"}, Key: "k"}).ForRepeat(1); err == nil || !strings.Contains(err.Error(), "not made by a RequestBuilder") {
		t.Errorf("ForRepeat of a hand-made request: %v, want a refusal", err)
	}
}
