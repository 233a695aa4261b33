package schedule

import (
	"fmt"
	"math"

	"github.com/npcorch/npcorch/configs"
)

// Workload is the estimated work one model does in a campaign.
type Workload struct {
	Model        string `json:"model"`
	Requests     int    `json:"requests"`
	PromptTokens int64  `json:"prompt_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// Add returns the sum of two workloads of the same model.
func (w Workload) Add(o Workload) Workload {
	w.Requests += o.Requests
	w.PromptTokens += o.PromptTokens
	w.OutputTokens += o.OutputTokens
	return w
}

// PaperTask is one task's request mix at the NPCBench paper's scale.
type PaperTask struct {
	// Key is the task key (configs.Task*).
	Key string
	// Requests is the number of requests.
	Requests int
	// MinImages and MaxImages bound the images per request; counts are spread
	// evenly between them over the requests.
	MinImages, MaxImages int
	// ImageTokens is the estimated tokens of one image.
	ImageTokens int
	// TextTokens is the estimated prompt text per request.
	TextTokens int
	// MaxTokens is the output budget used when the model sets none.
	MaxTokens int
}

// imageTokens estimates an image's tokens from its size: about 1,000 for a
// 512×1644 plane group (Qwen2.5-VL ≈ 1,062, Qwen3-VL ≈ 816, InternVL3.5 ≈
// 1,024), proportional to the pixel count.
func imageTokens(w, h int) int {
	return int(math.Round(float64(w*h) / (512 * 1644) * 1000))
}

// PaperTasks lists the L3 and L6 request mix of the NPCBench paper: L3
// pathology 69, sequence 200, structure cards 2,700, T staging 400 (100
// requests of 27 cards, 300 of 44-79 plane groups), N staging 400 plane
// group requests; L6 100 pathology, 100 MRI (10 pages) and 217 care
// decisions. Geometry: panels 3×3 and cards and MRI pages 3×4 tiles of 512
// px; pathology overviews are taken as one plane group's worth.
func PaperTasks() []PaperTask {
	group := imageTokens(512, 1644)
	panel := imageTokens(3*512, 3*512)
	card := imageTokens(3*512, 4*512)
	return []PaperTask{
		{Key: configs.TaskPathology, Requests: 69, MinImages: 1, MaxImages: 1, ImageTokens: group, TextTokens: 300, MaxTokens: 1024},
		{Key: configs.TaskSequence, Requests: 200, MinImages: 1, MaxImages: 1, ImageTokens: panel, TextTokens: 300, MaxTokens: 1024},
		{Key: configs.TaskCard, Requests: 2700, MinImages: 1, MaxImages: 1, ImageTokens: card, TextTokens: 400, MaxTokens: 1024},
		{Key: configs.TaskTCards, Requests: 100, MinImages: 27, MaxImages: 27, ImageTokens: card, TextTokens: 800, MaxTokens: 8192},
		{Key: configs.TaskTGroups, Requests: 300, MinImages: 44, MaxImages: 79, ImageTokens: group, TextTokens: 800, MaxTokens: 8192},
		{Key: configs.TaskNGroups, Requests: 400, MinImages: 44, MaxImages: 79, ImageTokens: group, TextTokens: 800, MaxTokens: 8192},
		{Key: configs.TaskCPPathology, Requests: 100, MinImages: 1, MaxImages: 1, ImageTokens: group, TextTokens: 600, MaxTokens: 1024},
		{Key: configs.TaskCPMRI, Requests: 100, MinImages: 10, MaxImages: 10, ImageTokens: card, TextTokens: 1000, MaxTokens: 1024},
		{Key: configs.TaskCPCare, Requests: 217, TextTokens: 1500, MaxTokens: 1024},
	}
}

// PaperScale returns model m's workload for the given task keys at the
// paper's scale (all tasks when keys is empty). The model's task settings
// cap the images per request (max_images) and give the output budget
// (max_tokens, counted in full: the estimate is conservative); a prompt
// never exceeds the model's context minus its output budget, as the runner
// sub-samples plane groups to fit.
func PaperScale(m configs.Model, keys []string) (Workload, error) {
	want := map[string]bool{}
	for _, k := range keys {
		if k == configs.TaskCarePath {
			want[configs.TaskCPPathology], want[configs.TaskCPMRI], want[configs.TaskCPCare] = true, true, true
			continue
		}
		if !configs.IsTask(k) {
			return Workload{}, fmt.Errorf("workload for %s: unknown task %q; valid tasks: %v or %q", m.Name, k, configs.TaskKeys, configs.TaskCarePath)
		}
		want[k] = true
	}
	w := Workload{Model: m.Name}
	for _, t := range PaperTasks() {
		if len(want) > 0 && !want[t.Key] {
			continue
		}
		w = w.Add(taskWorkload(m, t))
	}
	return w, nil
}

// taskWorkload sums one task's requests for model m.
func taskWorkload(m configs.Model, t PaperTask) Workload {
	set := m.Tasks[t.Key]
	budget := t.MaxTokens
	if set.MaxTokens > 0 {
		budget = set.MaxTokens
	}
	w := Workload{Model: m.Name, Requests: t.Requests, OutputTokens: int64(budget) * int64(t.Requests)}
	for i := range t.Requests {
		images := t.MinImages
		if t.Requests > 1 && t.MaxImages > t.MinImages {
			images += int(math.Round(float64(i*(t.MaxImages-t.MinImages)) / float64(t.Requests-1)))
		}
		if set.MaxImages > 0 {
			images = min(images, set.MaxImages)
		}
		prompt := t.TextTokens + images*t.ImageTokens
		if m.ContextLength > 0 {
			prompt = min(prompt, max(m.ContextLength-budget, t.TextTokens))
		}
		w.PromptTokens += int64(prompt)
	}
	return w
}

// PaperScaleAll returns PaperScale for each model, in order.
func PaperScaleAll(models []configs.Model, keys []string) ([]Workload, error) {
	out := make([]Workload, 0, len(models))
	for _, m := range models {
		w, err := PaperScale(m, keys)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}
