package campaign

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
)

// DatasetWorkloads counts each local model's and judge's work in the campaign's
// prepared dataset, for `npcorch plan` without a run. The dataset's
// problems come back for the caller to report (LoadBench).
func DatasetWorkloads(c *configs.Campaign) ([]schedule.Workload, Problems, error) {
	reg := Benchmark()
	src, err := CampaignSource(reg, c)
	if err != nil {
		return nil, Problems{}, err
	}
	if err := checkFolders(c, src); err != nil {
		return nil, Problems{}, err
	}
	b, err := LoadBench(reg, src)
	if err != nil {
		return nil, Problems{}, err
	}
	var out []schedule.Workload
	for _, m := range c.Resolved {
		if m.Engine.Kind != configs.EngineExternal {
			m = reg.TrimTasks(m)
			out = append(out, workload(m, itemsFor(b.Items, m).Items(), c.Repeat)...)
		}
	}
	if jt := judgeTaskOf(reg, b.Items); jt != nil {
		for _, j := range c.ResolvedJudges {
			if j.Engine.Kind != configs.EngineExternal {
				out = append(out, judgeWorkload(b.Items, c.Resolved, j, jt)) // JudgeAfter gives their dependencies
			}
		}
	}
	return out, b.Problems, nil
}
