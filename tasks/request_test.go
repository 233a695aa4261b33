package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
	"testing"
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
	model.Tasks[configs.TaskTGroups] = configs.TaskSettings{MaxTokens: 10, MaxImages: 6}
	prompts, _ := LoadPrompts(configs.Defaults, "prompts", configs.DefaultStructures())
	it := Item{ID: "t_groups/P1", Task: configs.TaskTGroups, Images: imgs, Planes: planes}
	req, err := RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}.Build(prompts, it, 0, nil)
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
	if _, err := (RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root}).Build(prompts, it, 0, nil); err == nil ||
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
		a, th := SplitReasoning(c.content, c.field)
		if a != c.answer || th != c.thought {
			t.Errorf("SplitReasoning(%q, %q) = %q, %q; want %q, %q", c.content, c.field, a, th, c.answer, c.thought)
		}
	}
}

func TestRequestKeyChangesWithWhatDecidesTheAnswer(t *testing.T) {
	base := func() (string, error) { return requestKey("M", "i", 0, "p", "img", 10, map[string]any{"a": 1}) }
	k0, _ := base()
	k1, _ := base()
	if k0 != k1 {
		t.Fatal("request key is not stable")
	}
	variants := []func() (string, error){
		func() (string, error) { return requestKey("M2", "i", 0, "p", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 1, "p", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p2", "img", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img2", 10, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img", 11, map[string]any{"a": 1}) },
		func() (string, error) { return requestKey("M", "i", 0, "p", "img", 10, map[string]any{"a": 2}) },
	}
	for i, v := range variants {
		k, _ := v()
		if k == k0 {
			t.Errorf("variant %d has the same key", i)
		}
	}
}

func TestLoadPromptsFromAUserFolder(t *testing.T) {
	dir := t.TempDir()
	for _, task := range configs.TaskKeys {
		os.WriteFile(filepath.Join(dir, task+".tmpl"), []byte("custom "+task+" with {{len .Structures}} structures"), 0o644)
	}
	p, err := LoadPrompts(os.DirFS(dir), ".", configs.DefaultStructures())
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Render(Item{ID: "card/P1", Task: configs.TaskCard}, nil)
	if err != nil || got != "custom card with 18 structures" {
		t.Fatalf("Render = %q, %v", got, err)
	}
	os.Remove(filepath.Join(dir, "cp_care.tmpl"))
	if _, err := LoadPrompts(os.DirFS(dir), ".", configs.DefaultStructures()); err == nil || !strings.Contains(err.Error(), "prompt for task cp_care") {
		t.Fatalf("missing template: err = %v", err)
	}
}
