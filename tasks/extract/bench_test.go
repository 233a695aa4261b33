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
