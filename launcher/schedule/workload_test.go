package schedule

import (
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
	if want := (Workload{Model: "M", Requests: 69, PromptTokens: 69 * 1300, OutputTokens: 69 * 1024}); path != want {
		t.Errorf("pathology %+v, want %+v", path, want)
	}
	// 300 plane-group requests of 44..79 images: the counts spread evenly,
	// so their mean is 61.5 images.
	groups, _ := PaperScale(m, []string{configs.TaskTGroups})
	if want := int64(300*800 + 300*61.5*1000); groups.PromptTokens != want {
		t.Errorf("t_groups prompt %d, want %d", groups.PromptTokens, want)
	}
	// max_images 35 caps every request (44 or more groups each).
	m.Tasks = map[string]configs.TaskSettings{configs.TaskTGroups: {MaxTokens: 4096, MaxImages: 35}}
	capped, _ := PaperScale(m, []string{configs.TaskTGroups})
	if want := (Workload{Model: "M", Requests: 300, PromptTokens: 300 * (800 + 35*1000), OutputTokens: 300 * 4096}); capped != want {
		t.Errorf("capped %+v, want %+v", capped, want)
	}
	// A 32,768-token context minus the 8,192 output budget bounds the prompt.
	m = configs.Model{Name: "Short", ContextLength: 32768}
	short, _ := PaperScale(m, []string{configs.TaskNGroups})
	if want := int64(400 * (32768 - 8192)); short.PromptTokens != want {
		t.Errorf("short-context prompt %d, want %d", short.PromptTokens, want)
	}
	cp, _ := PaperScale(configs.Model{Name: "M"}, []string{configs.TaskCarePath})
	if cp.Requests != 417 {
		t.Errorf("carepath requests %d, want 417", cp.Requests)
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
