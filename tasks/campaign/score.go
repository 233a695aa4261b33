package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// ScoreDir recomputes a run's scores from RUN/run.json, the journal and the
// dataset alone, and writes scores.json, scores.csv and scores.md. The same
// journal and dataset give the same bytes.
func ScoreDir(runDir string) (*tasks.Results, error) {
	var meta Meta
	data, err := os.ReadFile(filepath.Join(runDir, "run.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", runDir, err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("%s/run.json: %w", runDir, err)
	}
	reg := Benchmark()
	st := reg.Structures()
	raw, err := dataset.LoadRaw(meta.Raw, st.IDs())
	var problems dataset.Problems
	if err != nil && !errors.As(err, &problems) {
		return nil, err
	}
	prep, err := dataset.LoadPrepared(meta.Prepared)
	if err != nil {
		return nil, err
	}
	items, _, err := tasks.BuildItems(reg, raw, prep, meta.Tasks)
	if err != nil {
		return nil, fmt.Errorf("%s/run.json: %w", runDir, err)
	}
	j, err := tasks.ReadJournal(runDir)
	if err != nil {
		return nil, err
	}
	res, err := tasks.ScoreRun(reg, meta.Campaign, raw, items, j, meta.Models, meta.Repeats, score.Options{Seed: uint64(meta.Seed)})
	if err != nil {
		return nil, err
	}
	if err := tasks.WriteScoreFiles(runDir, res); err != nil {
		return nil, err
	}
	return res, nil
}

// reportJournal writes each problem of a resumed run's journal to w, with
// file, line and what is done about it, before the run goes on.
func reportJournal(w io.Writer, st *tasks.JournalState, c *configs.Campaign, items []tasks.Item) {
	models := make([]string, len(c.Resolved))
	for i, m := range c.Resolved {
		models[i] = m.Name
	}
	for _, p := range st.Check(items, models, c.Repeat) {
		fmt.Fprintf(w, "journal problem: %v\n", p)
	}
}
