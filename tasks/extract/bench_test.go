package extract

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func BenchmarkTStaging(b *testing.B) {
	s := configs.DefaultStructures()
	raw := "The clivus shows low T1 signal.\n```json\n" + `{"structure_invasion":{"nasal_passage":0,"oropharynx":0,"levator_veli_palatini":1,"carotid_sheath":0,"parapharyngeal_space":1,"medial_pterygoid":0,"lateral_pterygoid":0,"longus_capitis":1,"clivus":1,"basisphenoid":0,"petrous_apex":0,"pterygoid_base":0,"sphenoid_sinus":0,"ethmoid_sinus":0,"atlas":0,"axis":0,"foramen_lacerum":0,"cavernous_sinus":0},"t_stage":"T3"}` + "\n```"
	for b.Loop() {
		if st := TStaging(raw, s); !st.TStage.OK() {
			b.Fatal(st.TStage.Failure)
		}
	}
}

func BenchmarkSequenceLongReasoning(b *testing.B) {
	raw := strings.Repeat("Comparing option A with option B, the CSF signal suggests T2. ", 400) + "\nFinal answer: \\boxed{B}"
	for b.Loop() {
		if l := Sequence(raw, sequenceClasses); !l.Is("T2_Ax") {
			b.Fatal(l)
		}
	}
}

// BenchmarkOptionSearch1MB extracts options from 1 MB answers: one line of
// repeated labels (a degenerate loop), thousands of boxes, thousands of
// option lines, unclosed boxes; each ends with the final answer.
func BenchmarkOptionSearch1MB(b *testing.B) {
	const size = 1 << 20
	rep := func(unit string) string { return strings.Repeat(unit, size/len(unit)+1) }
	for name, text := range map[string]string{
		"labels_on_one_line": rep("The answer is B because option A lacks contrast. "),
		"boxes":              rep(`\boxed{B} `),
		"option_lines":       rep("B\n"),
		"unclosed_boxes":     rep(`\boxed{\fbox{`),
		"remarks":            rep("Answer: B (confidence 0.9), not A or maybe\n"),
		"heading_words":      rep("## Final Response final response ## Thinking "),
		"chinese_labels":     rep("答案是B，选项A和C不对。最终答案"),
		"conclusions":        rep("B. Radiotherapy alone would undertreat\nSo I'd go with C\n"),
		"hyphen_words":       rep("D-dimer C-reactive 0.85 "),
	} {
		raw := text + "\nFinal answer: \\boxed{B}"
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if l := Sequence(raw, sequenceClasses); l.Failure != nil && l.Failure.Kind == "" {
					b.Fatal(l)
				}
			}
		})
	}
}

// BenchmarkChoicesSearch1MB extracts multiple-select sets from 1 MB
// answers of the same degenerate kinds, and a long list of letters.
func BenchmarkChoicesSearch1MB(b *testing.B) {
	const size = 1 << 20
	rep := func(unit string) string { return strings.Repeat(unit, size/len(unit)+1) }
	letters := []string{"A", "B", "C", "D", "E"}
	for name, text := range map[string]string{
		"labels_on_one_line": rep("The answer is A and C because option B lacks evidence. "),
		"boxes":              rep(`\boxed{A,C} `),
		"option_lines":       rep("A, C\n"),
		"letter_list":        rep("A, C, "),
		"remarks":            rep("Answer: A and C (both), not B or maybe\n"),
		"box_run":            rep(`\boxed{A}\boxed{C}`),
		"set_remarks":        rep("Final answers: A、C。 (B is reserved) A + C + "),
	} {
		raw := text + "\nFinal answer: \\boxed{A,C}"
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if l := Choices(raw, letters); l.Failure != nil && l.Failure.Kind == "" {
					b.Fatal(l)
				}
			}
		})
	}
}
