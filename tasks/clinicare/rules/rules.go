package rules

import (
	"fmt"
	"strings"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// judges maps each scenario id to its rules.
var judges = map[string]func(Source, Case) (Outcome, error){
	"post-ct-aki":        judgePostCT,
	"ct-mri-receipt":     judgeImaging,
	"med-reconciliation": judgeMedrec,
	"renal-trajectory":   judgeRenal,
	"dka-resolution":     judgeDKA,
	"pneumonia-curb65":   judgeCURB,
	"readmission-30d":    judgeReadmit,
	"he-precipitant":     judgeHepatic,
}

// Scenarios lists the scenario ids the engine knows, sorted.
func Scenarios() []string { return ehr.SortedKeys(judges) }

// Judge reads a case.
func Judge(src Source, c Case) (Outcome, error) {
	j, ok := judges[c.Scenario]
	if !ok {
		return Outcome{}, fmt.Errorf("no rules for scenario %q (known: %s)", c.Scenario, strings.Join(Scenarios(), ", "))
	}
	return j(src, c)
}
