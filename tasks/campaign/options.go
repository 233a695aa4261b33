package campaign

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/live"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/score"
)

// Benchmark is the benchmark campaigns run: NPCBench's tasks over the
// embedded base structures. Run, score, plan and report all take it from
// here.
func Benchmark() *tasks.Registry {
	return npcbench.Registry(configs.DefaultStructures())
}

// CheckTasks checks every task key the campaign file and its model
// registry write against reg (each unknown one an error naming its file,
// line and field) and returns the campaign's tasks in run order.
func CheckTasks(reg *tasks.Registry, c *configs.Campaign) ([]string, error) {
	if err := reg.CheckTaskRefs(c.TaskRefs); err != nil {
		return nil, err
	}
	return reg.Select(c.Tasks)
}

// Options set up one campaign run.
type Options struct {
	Campaign *configs.Campaign
	// Self is the argv prefix that runs this npcorch binary, e.g.
	// [os.Executable()]; engines are started through `Self serve
	// engine-shim` and simulated engines as `Self sim-engine serve`.
	Self []string
	// Resume continues the run in the run directory: only what its
	// journal lacks is sent. A directory without a run is refused.
	// Without it, a directory whose journal holds answers is refused.
	// A resumed run keeps the repeats and seed its run.json records
	// (Campaign is set to them), and is refused where Repeat or the
	// campaign file asks others.
	Resume bool
	// Repeat, when above 0, is --repeat: it overrides the campaign's.
	Repeat int
	// Fresh empties the run directory once its lock is held (what an
	// earlier run left there), so a new run's journal starts empty; a
	// directory in use by another run is refused untouched. Not with
	// Resume.
	Fresh bool
	// Out receives the summary table; Log the event lines; Progress the
	// per-model progress (bars on a terminal).
	Out, Log, Progress io.Writer
	// Timing overrides the launcher's delays (tests and the demo shrink
	// them); zero fields keep the defaults, and the campaign file's launch
	// settings win over both.
	Timing launcher.Timing
	// SampleInterval is the GPU sampler's period (0 = 1 s).
	SampleInterval time.Duration
	// MeasureInterval is how often the scheduler hears each model's
	// progress and each replica's measured speed (0 = 1 min); a replica
	// that stops reports its last speed sample then.
	MeasureInterval time.Duration
	// Live, when set, serves the live page, metrics and JSON while the
	// run lasts (package live); Run closes it. RUN/status.json is written
	// either way.
	Live *live.Listener
}

// Meta is RUN/run.json: what `npcorch score` needs to recompute the scores
// from the journal and the dataset alone.
type Meta struct {
	Campaign string `json:"campaign"`
	// CampaignFile is the campaign file the run was started from, for
	// the command that continues it; absent for an embedded campaign.
	CampaignFile string   `json:"campaign_file,omitempty"`
	Raw          string   `json:"raw"`
	Prepared     string   `json:"prepared"`
	Models       []string `json:"models"`
	Tasks        []string `json:"tasks"`
	// ModelTasks are the tasks each model was asked, in Tasks' order: a
	// text-only model none that needs images. Absent (a run of an older
	// npcorch): every model was asked every task.
	ModelTasks map[string][]string `json:"model_tasks,omitempty"`
	Repeats    int                 `json:"repeats"`
	Seed       int64               `json:"seed"`
	Node       string              `json:"node"`
}

// runModels are the run's models with the tasks each was asked.
func (m Meta) runModels() []score.RunModel {
	out := score.RunModels(m.Models...)
	if m.ModelTasks == nil {
		return out
	}
	for i := range out {
		out[i].Tasks = m.ModelTasks[out[i].Name]
		if out[i].Tasks == nil {
			out[i].Tasks = []string{}
		}
	}
	return out
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
