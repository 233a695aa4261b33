package campaign

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
	"github.com/npcorch/npcorch/tasks/send"
)

// driver carries one run: it sets up the node, the backend, the client
// and the runner, then runs the loop (loop.go), the one goroutine that
// owns the run's changing state. Its own fields are set before the loop
// starts and only read after.
type driver struct {
	opt      Options
	runDir   string
	prepDir  string
	reg      *tasks.Registry
	items    []tasks.Item
	models   map[string]configs.Model
	node     placement.Node
	nodeSpec gpu.NodeSpec // the campaign's node:, parsed
	gpuSrc   gpu.Source
	backend  launcher.Backend
	runner   modelRunner
	client   *inference.Client
	journal  *journal.Journal
	imgLimit launcher.ImageLimits
	// answered counts, per model and task, the requests the journal
	// answered before this run: their share of the work is done; before
	// are those records, for the live view.
	answered map[string]map[string]int
	before   []journal.Record
	// live is the run's status hub (nil in unit tests): the loop posts
	// what happens to it.
	live *live.Hub
	// est turns workloads into work, as the scheduler counts it.
	est schedule.Estimator
	// after holds, by judge, the generators whose answers it judges
	// (judge.go); nil without judges.
	after map[string][]string
	// now is the run's clock; measure ticks when the scheduler is due
	// each model's progress and each replica's speed.
	now     func() time.Time
	measure <-chan time.Time

	// plan, sums and spans are the loop's results, read once it ended.
	plan    *schedule.Plan
	sums    map[string]send.Summary
	spans   []gpu.Span
	samples *os.File
}

// modelRunner sends a model's requests through its pool and journals
// them; *send.Runner is the real one.
type modelRunner interface {
	Run(ctx context.Context, mr send.ModelRun) (send.Summary, error)
}

// measureEvery is how often, by default, the scheduler hears each model's
// progress and each replica's measured speed.
const measureEvery = time.Minute

// giveSimKey writes the answer key of a simulated model m over items to
// the run folder and passes it, with the campaign's seed, on m's engine
// command line; other engines are left alone.
func (d *driver) giveSimKey(m *configs.Model, prompts *tasks.Prompts, items func(func(tasks.Item) bool)) error {
	if m.Engine.Kind != configs.EngineSim {
		return nil
	}
	key, err := tasks.BuildSimKey(d.reg, d.builder(*m), prompts, items)
	if err != nil {
		return err
	}
	path := filepath.Join(d.runDir, "simkeys", journal.SafeName(m.Name)+".json")
	if err := key.Write(path); err != nil {
		return err
	}
	m.Engine.Sim = append(m.Engine.Sim, "--sim-key", path, "--sim-seed", fmt.Sprint(d.opt.Campaign.Seed))
	return nil
}

// answeredBefore counts the journal's answered requests by model and task.
func answeredBefore(st *journal.State) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, rec := range st.Records {
		if rec.Status != journal.StatusAnswered {
			continue
		}
		if out[rec.Model] == nil {
			out[rec.Model] = map[string]int{}
		}
		out[rec.Model][rec.Task]++
	}
	return out
}

// timing is the engines' lifecycle: the campaign file's launch settings
// over the caller's Timing over the launcher's defaults.
func (d *driver) timing() launcher.Timing {
	return d.opt.Timing.With(d.opt.Campaign.Launch)
}

// engines are the engine kinds npcorch launches, its own simulated engine
// among them.
func (d *driver) engines() launcher.Engines {
	return launcher.Engines{Sim: append(slices.Clone(d.opt.Self), "sim-engine")}
}

// builder is the request builder of a model: file:// URLs for engines that
// share this disk (started with --allowed-local-media-path), base64
// otherwise, unless the campaign says.
func (d *driver) builder(m configs.Model) tasks.RequestBuilder {
	media := d.opt.Campaign.Media
	if media == configs.MediaAuto {
		media = configs.MediaFile
		if m.Engine.Kind == configs.EngineExternal || d.opt.Campaign.Host != "127.0.0.1" || !d.sharesDisk() {
			media = configs.MediaBase64
		}
	}
	return tasks.RequestBuilder{Model: m, Media: media, Root: d.prepDir, MaxBytes: d.opt.Campaign.Client.MaxRequestBytes}
}

// modelItems is a model's share of the campaign's items, those of the tasks
// it is asked: a filter over the campaign's list, read as the runner goes,
// not a copy of it.
type modelItems struct {
	all   []tasks.Item
	tasks map[string]configs.TaskSettings
}

func itemsFor(items []tasks.Item, m configs.Model) modelItems {
	return modelItems{all: items, tasks: m.Tasks}
}

// Len is how many of the campaign's items the model is asked, counted
// when asked (the runner asks once a run).
func (s modelItems) Len() int {
	n := 0
	for range s.Items() {
		n++
	}
	return n
}

// Items yields the model's items in the campaign's order.
func (s modelItems) Items() iter.Seq[tasks.Item] {
	return func(yield func(tasks.Item) bool) {
		for i := range s.all {
			if _, ok := s.tasks[s.all[i].Task]; ok && !yield(s.all[i]) {
				return
			}
		}
	}
}

// maxImages is the most images one request of model m carries, over the
// items it is asked.
func maxImages(m configs.Model, items []tasks.Item) int {
	n := 1
	for it := range itemsFor(items, m).Items() {
		k := len(it.Images)
		if lim := m.Tasks[it.Task].MaxImages; lim > 0 && k > lim {
			k = lim
		}
		n = max(n, k)
	}
	return n
}

// imageLimits is the largest request the dataset makes: image count and
// pixel size, for --limit-mm-per-prompt.
func imageLimits(items []tasks.Item) launcher.ImageLimits {
	var l launcher.ImageLimits
	for _, it := range items {
		l.Count = max(l.Count, len(it.Images))
		for _, img := range it.Images {
			l.Width, l.Height = max(l.Width, img.Width), max(l.Height, img.Height)
		}
	}
	return l
}

// writeSpeeds writes what the engines were measured to do (the scheduler's
// speed estimates, nil when nothing was) to RUN/speeds.json, replacing the
// file whole: a status reader (schedule.ReadSpeeds) never sees half of it.
func (d *driver) writeSpeeds(s *schedule.Speeds) error {
	if s == nil {
		return nil
	}
	path := filepath.Join(d.runDir, schedule.SpeedsFile)
	tmp := path + ".tmp"
	if err := writeJSON(tmp, s); err != nil {
		return fmt.Errorf("measured speeds: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("measured speeds: %w", err)
	}
	return nil
}

// modelsNotRun names every model the campaign abandoned, with the reason:
// the run goes on without them, but must not look complete.
func modelsNotRun(p *schedule.Plan) error {
	var errs []error
	for _, m := range p.Models {
		switch m.Status {
		case schedule.StatusFailed:
			errs = append(errs, fmt.Errorf("model %s was abandoned: %s; its engine logs are in the run directory (engines/, or slurm/ for Slurm jobs)", m.Model, firstLine(m.Note)))
		case schedule.StatusUnplaceable:
			errs = append(errs, fmt.Errorf("model %s was abandoned: %s", m.Model, m.Note))
		}
	}
	return errors.Join(errs...)
}

// firstLine is the first line of s: an engine error's message without
// its log tail.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// externalEndpoint is the endpoint of a model served outside npcorch,
// with its API key from the environment variable the model names.
func externalEndpoint(m configs.Model) (launcher.Endpoint, error) {
	key := ""
	if m.Engine.APIKeyEnv != "" {
		key = os.Getenv(m.Engine.APIKeyEnv)
		if key == "" {
			return launcher.Endpoint{}, fmt.Errorf("model %s: environment variable %s is empty; export the endpoint's API key in it", m.Name, m.Engine.APIKeyEnv)
		}
	}
	return launcher.Endpoint{Model: m.Name, External: true, BaseURL: m.Engine.BaseURL, APIKey: key, MaxNumSeqs: max(m.Engine.MaxNumSeqs, 1)}, nil
}

func (d *driver) summaries() []send.Summary {
	var out []send.Summary
	for _, m := range append(slices.Clone(d.opt.Campaign.Resolved), d.opt.Campaign.ResolvedJudges...) {
		if s, ok := d.sums[m.Name]; ok {
			out = append(out, s)
		}
	}
	return out
}

// close stops every engine (verified), syncs the journal and writes the
// GPU spans; replicas still serving (an interrupted run) end now. The
// loop has ended: the runners and backend calls have reported.
func (d *driver) close() error {
	err := d.backend.Close(context.Background())
	now := d.now()
	for i := range d.spans {
		if d.spans[i].End.IsZero() {
			d.spans[i].End = now
		}
	}
	d.client.Close()
	err = errors.Join(err, d.journal.Close())
	if d.samples != nil {
		err = errors.Join(err, d.samples.Close())
		slices.SortFunc(d.spans, func(a, b gpu.Span) int { return a.Start.Compare(b.Start) })
		err = errors.Join(err, writeJSON(filepath.Join(d.runDir, "gpu", "spans.json"), d.spans))
	}
	return errors.Join(err, d.gpuSrc.Close())
}

// sharesDisk says whether engines see this machine's files at the same
// paths, so that images may travel as file:// URLs.
func (d *driver) sharesDisk() bool {
	c := d.opt.Campaign
	return c.Backend != configs.BackendSlurm || c.Slurm.SharedFilesystem
}
