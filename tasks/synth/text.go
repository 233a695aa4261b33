package synth

import (
	"fmt"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// planText writes the text levels' sections of the dataset.
func planText(opt Options, raw *dataset.Raw) error {
	var err error
	if raw.Guideline, err = planGuideline(opt.Seed, opt.Guideline); err != nil {
		return err
	}
	if raw.Application, err = planApplication(opt.Seed, opt.Application); err != nil {
		return err
	}
	if raw.Planning, err = planPlanning(opt.Seed, opt.Planning); err != nil {
		return err
	}
	raw.Longitudinal = planLongitudinal(opt.Seed, opt.Longitudinal)
	return nil
}

// textSummary counts the text levels' items for README.txt.
func textSummary(raw *dataset.Raw) string {
	multiple, groups := 0, map[string]bool{}
	for _, q := range raw.Application {
		if q.Multiple {
			multiple++
		}
	}
	planMultiple := 0
	for _, q := range raw.Planning {
		groups[q.Patient] = true
		if q.Multiple {
			planMultiple++
		}
	}
	checkpoints := 0
	for _, t := range raw.Longitudinal {
		checkpoints += len(t.Checkpoints)
	}
	return fmt.Sprintf("%d L1 guideline questions, %d L2 vignettes (%d multiple-select),\n           %d L4 questions of %d patient groups (%d multiple-select), %d L5 checkpoints of %d trajectories",
		len(raw.Guideline), len(raw.Application), multiple, len(raw.Planning), len(groups), planMultiple, checkpoints, len(raw.Longitudinal))
}
