package schedule

import (
	"math"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func TestPaperScale(t *testing.T) {
	m := configs.Model{Name: "M"}
	all, err := PaperScale(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.Requests != 69+200+2700+400+400+100+100+217 {
		t.Errorf("requests %d, want 4186", all.Requests)
	}
	path, err := PaperScale(m, []string{configs.TaskPathology})
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Model: "M", Task: configs.TaskPathology, Requests: 69, PromptTokens: 69 * 1300, OutputTokens: 69 * 1024,
		Images: 69, ImagePixels: 69 * 512 * 1644}
	if path != want {
		t.Errorf("pathology %+v, want %+v", path, want)
	}
	// 300 plane-group requests of 44..79 images: the counts spread evenly,
	// so their mean is 61.5 images.
	groups, _ := PaperScale(m, []string{configs.TaskTGroups})
	if want := int64(300*800 + 300*61.5*1000); groups.PromptTokens != want {
		t.Errorf("t_groups prompt %d, want %d", groups.PromptTokens, want)
	}
	if groups.Images != 300*61.5 || groups.PlaneGroups() != 300*61.5 {
		t.Errorf("t_groups images %d (%v plane groups), want 18450", groups.Images, groups.PlaneGroups())
	}
	// A structure card is 1536×2048: 3.74 plane groups to preprocess.
	cards, _ := PaperScale(m, []string{configs.TaskTCards})
	if cards.Images != 2700 || math.Abs(cards.PlaneGroups()-2700*1536*2048/(512*1644.0)) > 1e-6 {
		t.Errorf("t_cards: %d images, %v plane groups", cards.Images, cards.PlaneGroups())
	}
	// max_images 35 caps every request (44 or more groups each).
	m.Tasks = map[string]configs.TaskSettings{configs.TaskTGroups: {MaxTokens: 4096, MaxImages: 35}}
	capped, _ := PaperScale(m, []string{configs.TaskTGroups})
	if want := (Workload{Model: "M", Task: configs.TaskTGroups, Requests: 300, PromptTokens: 300 * (800 + 35*1000), OutputTokens: 300 * 4096,
		Images: 300 * 35, ImagePixels: 300 * 35 * 512 * 1644}); capped != want {
		t.Errorf("capped %+v, want %+v", capped, want)
	}
	// A 32,768-token context minus the 8,192 output budget bounds the prompt.
	m = configs.Model{Name: "Short", ContextLength: 32768}
	short, _ := PaperScale(m, []string{configs.TaskNGroups})
	if want := int64(400 * (32768 - 8192)); short.PromptTokens != want {
		t.Errorf("short-context prompt %d, want %d", short.PromptTokens, want)
	}
	// ... but every image is still sent and preprocessed.
	if short.Images != 400*61.5 {
		t.Errorf("short-context images %d, want 24600", short.Images)
	}
	cp, _ := PaperScale(configs.Model{Name: "M"}, []string{configs.TaskCarePath})
	if cp.Requests != 417 || cp.Task != "" || cp.Images != 100+100*10 {
		t.Errorf("carepath: %d requests, task %q, %d images; want 417, none, 1100", cp.Requests, cp.Task, cp.Images)
	}
	parts, err := PaperScaleTasks(configs.Model{Name: "M"}, []string{configs.TaskCarePath})
	if err != nil || len(parts) != 3 || parts[0].Task != configs.TaskCPPathology || parts[2].Task != configs.TaskCPCare || parts[2].Images != 0 {
		t.Errorf("carepath by task: %+v, %v", parts, err)
	}
	all2, err := PaperScaleAll([]configs.Model{{Name: "A"}, {Name: "B"}}, nil)
	if err != nil || len(all2) != 2*len(PaperTasks()) || all2[0].Model != "A" || all2[len(all2)-1].Model != "B" {
		t.Errorf("PaperScaleAll: %d workloads, %v", len(all2), err)
	}
	var sum Workload
	for _, w := range all2[:len(PaperTasks())] {
		sum = sum.Add(w)
	}
	if sum.Task != "" || sum.Requests != all.Requests || sum.Images != all.Images || sum.PromptTokens != all.PromptTokens {
		t.Errorf("the tasks of A sum to %+v, PaperScale says %+v", sum, all)
	}
	if _, err := PaperScale(m, []string{"t_stage"}); err == nil {
		t.Error("unknown task accepted")
	}
}

func TestEstimator(t *testing.T) {
	var e Estimator
	if got := e.Work(Workload{PromptTokens: 100, OutputTokens: 10}); got != 150 {
		t.Errorf("work %v, want 150 (decode cost 5)", got)
	}
	if got := e.Speed(configs.Model{ParamsB: 30, MoE: true}); got != 6000 {
		t.Errorf("MoE default speed %v, want 6000", got)
	}
	if got := e.Speed(configs.Model{ParamsB: 6}); got != 10000 {
		t.Errorf("dense default speed %v, want 10000", got)
	}
	m := configs.Model{WeightBytes: 32 << 30}
	if got := e.StartupTime(m, 2); got.Seconds() != 90+32 {
		t.Errorf("start-up %v, want 122 s (90 s + 2 s × 16 GiB per GPU)", got)
	}
}
