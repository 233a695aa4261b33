package tasks

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/extract"
)

// FindingsExtractor returns the Runner.Findings function: a model's own
// pathology, T stage and invaded structures, read from its cp_pathology and
// cp_mri answers by the same extraction that scores them. Nothing is
// guessed: an answer that does not parse leaves the finding empty, and the
// care prompt says "no valid answer".
func FindingsExtractor(st *configs.Structures) func(pathology, mri *Record) Findings {
	return func(pathology, mri *Record) Findings {
		var f Findings
		if pathology != nil && pathology.Answer != nil {
			if l := extract.Pathology(pathology.Answer.Content); l.OK() {
				f.Pathology = l.Value
			}
		}
		if mri != nil && mri.Answer != nil {
			s := extract.TStaging(mri.Answer.Content, st)
			if s.TStage.OK() {
				f.TStage = s.TStage.Value
			}
			if stagingParsed(s) {
				f.Invaded = append([]string{}, s.Invaded()...)
			}
		}
		return f
	}
}

// stagingParsed reports whether any invasion label was read, so that "no
// structure invaded" is told apart from "no answer".
func stagingParsed(s extract.Staging) bool {
	for _, l := range s.Invasion {
		if l.OK() {
			return true
		}
	}
	return false
}
