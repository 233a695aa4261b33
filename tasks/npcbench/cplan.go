package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// CPlan is L4 case-level planning (prompt A3): a patient's case at its
// decision state and a management question, answered with an option
// letter (the complete set for a multiple-select item). Its main score is
// patient-macro accuracy (Eq. A2), which weights patients equally. The
// paper: 165 questions over 84 patient groups in four categories (16, 43,
// 100, 6), two multiple-select.
const CPlan = "c_plan"

func cPlan() *tasks.Task {
	return &tasks.Task{
		Key: CPlan, Level: "L4", Title: "Case planning (L4, A3)",
		Cohort:      dataset.CohortPlanning,
		Build:       buildCPlan,
		Answer:      answerChoice,
		ScoredAlone: true,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(boxedStyle)},
		Paper:       schedule.RequestMix{Requests: 165, TextTokens: 1200, MaxTokens: 1024},
	}
}

// buildCPlan makes one item per case question, clustered by its patient
// group and grouped by its category.
func buildCPlan(b *tasks.Builder) {
	for i := range b.Raw().Planning {
		q := &b.Raw().Planning[i]
		addChoice(b, b.ItemID(q.Patient, q.ID), q.Patient, &q.Choice, q.Context, q.Category)
	}
}

// cPlanColumn is Table 1's C-Plan: patient-macro accuracy. When every
// patient has one question it is the item accuracy, which scoring then
// gives alone.
func cPlanColumn() score.Column {
	return choiceColumn("C-Plan", "L4", CPlan,
		func(ts *score.TaskScore) *score.Score { return orMicro(ts.PatientMacro, ts) },
		func(e score.Endpoints) *float64 { return orMicroBaseline(e.PatientMacro, e) })
}

// orMicro is a patient-level score, or the item accuracy it equals when
// every patient has one item.
func orMicro(s *score.Score, ts *score.TaskScore) *score.Score {
	if s == nil && ts.Units == ts.Patients {
		return ts.Accuracy
	}
	return s
}

func orMicroBaseline(v *float64, e score.Endpoints) *float64 {
	if v == nil {
		return &e.Accuracy
	}
	return v
}
