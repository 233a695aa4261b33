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
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/score"
)

// ScoreDir recomputes a run's scores from RUN/run.json, the journal and the
// dataset alone, and writes scores.json, scores.csv and scores.md. The same
// journal and dataset give the same bytes. The dataset's problems come
// back for the caller to report (LoadBench). A run folder that a run or
// another score holds (lockRunDir) is refused.
func ScoreDir(runDir string) (res *score.Results, problems Problems, err error) {
	var meta Meta
	data, err := os.ReadFile(filepath.Join(runDir, "run.json"))
	if err != nil {
		return nil, Problems{}, fmt.Errorf("%s is not a run directory: %w", runDir, err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, Problems{}, fmt.Errorf("%s/run.json: %w", runDir, err)
	}
	unlock, err := lockRunDir(runDir, "npcorch score")
	if err != nil {
		return nil, Problems{}, fmt.Errorf("score: %w", err)
	}
	defer func() { err = errors.Join(err, unlock()) }()
	reg := Benchmark()
	b, err := LoadBench(reg, Source{Raw: meta.Raw, Prepared: meta.Prepared, Tasks: meta.Tasks})
	if err != nil {
		return nil, Problems{}, err
	}
	res, err = scoreBench(runDir, meta, b)
	return res, b.Problems, err
}

// scoreBench scores the run's journal against the loaded bench and writes
// the score files.
func scoreBench(runDir string, meta Meta, b *Bench) (*score.Results, error) {
	j, err := journal.Read(runDir)
	if err != nil {
		return nil, err
	}
	res, err := score.ScoreRun(b.Registry, meta.Campaign, b.Raw, b.Items, j, meta.runModels(), meta.Repeats, score.Options{Seed: uint64(meta.Seed)})
	if err != nil {
		return nil, err
	}
	for _, p := range b.Problems.Items {
		res.LeftOut = append(res.LeftOut, score.LeftOutItem{Item: p.Item, Reason: p.Reason})
	}
	unsent, err := readUnsent(runDir)
	if err != nil {
		return nil, err
	}
	res.LeftOut = append(res.LeftOut, unsent...)
	if err := score.WriteScoreFiles(runDir, res); err != nil {
		return nil, err
	}
	return res, nil
}

// reportJournal writes each problem of a resumed run's journal to w, with
// file, line and what is done about it, before the run goes on.
func reportJournal(w io.Writer, reg *tasks.Registry, st *journal.State, c *configs.Campaign, items []tasks.Item) {
	models := make([]string, len(c.Resolved))
	for i, m := range c.Resolved {
		models[i] = m.Name
	}
	for _, p := range score.CheckJournal(reg, st, items, models, c.Repeat) {
		fmt.Fprintf(w, "journal problem: %v\n", p)
	}
}
