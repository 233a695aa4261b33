package importer

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/prepare"
)

// tilted is an axial orientation rotated by deg about the patient's left–
// right axis (row cosines (1, 0, 0)), as a T2 planned along the hard
// palate is.
func tilted(deg float64) [6]float64 {
	r := deg * math.Pi / 180
	return [6]float64{1, 0, 0, 0, math.Cos(r), math.Sin(r)}
}

// importTree writes the series as DICOM files (one folder per series),
// imports them with labels, and returns the result and the review
// table's rows by series number.
func importTree(t *testing.T, series []acq, labels string) (*Result, map[string][]string) {
	t.Helper()
	root := t.TempDir()
	tree, out := filepath.Join(root, "export"), filepath.Join(root, "data")
	for _, a := range series {
		for k, s := range a.dicom() {
			mustWrite(t, filepath.Join(tree, a.patient, fmt.Sprintf("s%d", a.number), fmt.Sprintf("%d.dcm", k+1)), s.Encode())
		}
	}
	lf := filepath.Join(root, "labels.csv")
	mustWrite(t, lf, []byte(labels))
	res, err := Import(context.Background(), Options{DICOM: tree, Labels: lf, Out: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res, reviewRows(t, out)
}

// reviewRows reads the review table in out by series number.
func reviewRows(t *testing.T, out string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, ReviewName))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[3]] = r
	}
	return rows
}

// slotOf is the series number the dataset puts in a slot of its first
// patient ("" for none).
func slotOf(t *testing.T, res *Result, rows map[string][]string, slot string) string {
	t.Helper()
	col := slices.Index(reviewHeader, "slot")
	var got []string
	for n, r := range rows {
		if r[col] == slot {
			got = append(got, n)
		}
	}
	if len(got) > 1 {
		t.Fatalf("%s holds series %v", slot, got)
	}
	for _, s := range res.Dataset.Patients[0].Series {
		if s.Sequence == slot && len(got) == 0 {
			t.Fatalf("dataset.json has %s, the review does not", slot)
		}
	}
	return strings.Join(got, "")
}

// TestParallelCandidateOutranksFatPreference is issue 25's case: a study
// with a fat-suppressed axial T2 (0°) and a T2 tilted 15° off axial
// without fat suppression. "Plane groups match slices of parallel planes
// only, so a candidate parallel to the study's other axial slots must
// outrank a preference on fat suppression; the tilted series is named in
// the review as the alternative." Built from DICOM files whose
// ImageOrientationPatient carries the tilt.
func TestParallelCandidateOutranksFatPreference(t *testing.T) {
	study := func(t1Tilt float64) []acq {
		return []acq{
			{"P010", "1.9.10", 1, "T1 TRA", tilted(t1Tilt), 6, nil},
			{"P010", "1.9.10", 2, "T1+C TRA", tilted(t1Tilt), 6, agent},
			{"P010", "1.9.10", 3, "T2 TSE FS TRA", axial, 6, t2},
			{"P010", "1.9.10", 5, "T2 TSE palate", tilted(15), 6, t2},
			{"P010", "1.9.10", 6, "T1 COR", coronal, 5, nil},
			{"P010", "1.9.10", 7, "T1+C COR FS", coronal, 5, agent},
		}
	}
	const labels = "patient_id,t_stage,t_from,t_to\nP010,T2,-20,0\n"
	why := slices.Index(reviewHeader, "why")

	res, rows := importTree(t, study(0), labels)
	if got := slotOf(t, res, rows, "T2_Ax"); got != "3" {
		t.Errorf("T2_Ax is series %q, want 3: the fat-suppressed axial T2 lies parallel to T1_Ax and T1+C_Ax; the review:\n%v\n%v", got, rows["3"], rows["5"])
	}
	for _, p := range res.Problems {
		t.Errorf("problem: %s", p)
	}
	for n, want := range map[string][]string{
		"3": {"T2_Ax: chosen, though fat-suppressed", "parallel to T1_Ax and T1+C_Ax",
			`the alternative is series 5 "T2 TSE palate" (1.9.10.5), 15.0° from T1_Ax`},
		"5": {"candidate for T2_Ax: the alternative, not chosen", "15.0° from T1_Ax, 15.0° from T1+C_Ax",
			"prep matches slices of parallel planes only", "series 3 was"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[n][why], w) {
				t.Errorf("review row of series %s does not say %q: %s", n, w, rows[n][why])
			}
		}
	}

	// When the other axial slots are tilted as the T2 is, the tilted T2 is
	// the parallel one: the rule is parallelism, not the axial plane.
	res, rows = importTree(t, study(15), labels)
	if got := slotOf(t, res, rows, "T2_Ax"); got != "5" {
		t.Errorf("with T1 and T1+C tilted 15°, T2_Ax is series %q, want the tilted T2 (5); the review:\n%v\n%v", got, rows["3"], rows["5"])
	}
	for _, p := range res.Problems {
		t.Errorf("problem: %s", p)
	}
	if w := "candidate for T2_Ax: not chosen (15.0° from T1_Ax, 15.0° from T1+C_Ax, and prep matches slices of parallel planes only): series 5 was"; !strings.Contains(rows["3"][why], w) {
		t.Errorf("review row of series 3 does not say %q: %s", w, rows["3"][why])
	}
}

// TestImportNamesTruncatedSliceAtScan: a slice cut short in its pixel
// data is named by import's header scan — before, import passed it as
// clean and only prep failed on it, although import's exit 0 means prep
// can make every image. Removed (or re-exported), the import resolves
// and prep makes every image.
func TestImportNamesTruncatedSliceAtScan(t *testing.T) {
	root := t.TempDir()
	tree, out := filepath.Join(root, "export"), filepath.Join(root, "data")
	study := []acq{
		{"P020", "1.9.20", 1, "T1 TRA", axial, 6, nil},
		{"P020", "1.9.20", 2, "T2 TRA", axial, 6, t2},
	}
	for _, a := range study {
		for k, s := range a.dicom() {
			mustWrite(t, filepath.Join(tree, fmt.Sprintf("s%d", a.number), fmt.Sprintf("%d.dcm", k+1)), s.Encode())
		}
	}
	cut := filepath.Join(tree, "s2", "4.dcm")
	data, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, cut, data[:len(data)-700]) // 32×32×2 bytes of pixels: cut in their middle
	labels := filepath.Join(root, "labels.csv")
	mustWrite(t, labels, []byte("patient_id\nP020\n"))
	opt := Options{DICOM: tree, Labels: labels, Out: out, Workers: 2}
	res, err := Import(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Problems {
		got = append(got, p.String())
	}
	const want = `unreadable: s2/4.dcm: corrupt or truncated DICOM (patient P020, series 2 "T2 TRA", instance 4): pixel data (7fe0,0010) at byte `
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "the file ends inside it: truncated") {
		t.Fatalf("problems %q, want one starting %q", got, want)
	}

	if err := os.Remove(cut); err != nil {
		t.Fatal(err)
	}
	res, err = Import(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		t.Errorf("problem after the cut file was removed: %s", p)
	}
	man, _, err := prepare.Run(context.Background(), prepare.Options{Tasks: npcbench.Registry(configs.DefaultStructures()), Dataset: out,
		Out: filepath.Join(root, "prep"), Workers: 2, Params: smallParams(), External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	if p := man.Patients[0]; len(p.Panels) != 2 || len(p.Failed) != 0 {
		t.Errorf("prep: %d panels, failed %+v", len(p.Panels), p.Failed)
	}
}

// TestImportJPEG2000Series: a series in JPEG 2000 (as GDCM writes it,
// 1.2.840.10008.1.2.4.90) is imported and prep makes its images through
// gdcmconv; on a machine without gdcmconv the import names the series,
// the program and its package, and does not exit 0; a series in a
// transfer syntax npcorch does not read fills no slot, the reason in the
// review.
func TestImportJPEG2000Series(t *testing.T) {
	gdcmconv, err := exec.LookPath("gdcmconv")
	if err != nil {
		t.Skip("GDCM's gdcmconv is not installed: apt-get install libgdcm-tools")
	}
	root := t.TempDir()
	tree, out := filepath.Join(root, "export"), filepath.Join(root, "data")
	study := []acq{
		{"P030", "1.9.30", 1, "T1 TRA", axial, 4, nil},
		{"P030", "1.9.30", 2, "T2 TRA", axial, 4, t2},
		{"P030", "1.9.30", 3, "T1 COR", coronal, 3, nil},
	}
	for _, a := range study {
		for k, s := range a.dicom() {
			name := filepath.Join(tree, fmt.Sprintf("s%d", a.number), fmt.Sprintf("%d.dcm", k+1))
			mustWrite(t, name, s.Encode())
			if a.number == 1 {
				continue
			}
			if b, err := exec.Command(gdcmconv, "--j2k", name, name).CombinedOutput(); err != nil {
				t.Fatalf("gdcmconv --j2k: %v %s", err, b)
			}
		}
	}
	// Series 3 in JPEG 2000 part 2, which npcorch does not read.
	for k := range 3 {
		name := filepath.Join(tree, "s3", fmt.Sprintf("%d.dcm", k+1))
		data, _ := os.ReadFile(name)
		mustWrite(t, name, bytes.Replace(data, []byte("1.2.840.10008.1.2.4.90"), []byte("1.2.840.10008.1.2.4.92"), 1))
	}
	labels := filepath.Join(root, "labels.csv")
	mustWrite(t, labels, []byte("patient_id\nP030\n"))
	opt := Options{DICOM: tree, Labels: labels, Out: out, Workers: 2}
	path := os.Getenv("PATH")

	t.Setenv("PATH", t.TempDir())
	res, err := Import(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Problems {
		got = append(got, p.String())
	}
	const want = `decoder: patient P030: series 2 "T2 TRA" (1.9.30.2) chosen for T2_Ax: transfer syntax 1.2.840.10008.1.2.4.90 (JPEG 2000) needs gdcmconv to decompress, which is not installed: install it before prep (Debian: apt-get install libgdcm-tools)`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("without gdcmconv: problems %q, want one starting %q", got, want)
	}

	t.Setenv("PATH", path)
	res, rows := importTreeAgain(t, opt)
	for _, p := range res.Problems {
		t.Errorf("with gdcmconv: problem %s", p)
	}
	col, why := slices.Index(reviewHeader, "slot"), slices.Index(reviewHeader, "why")
	if rows["2"][col] != "T2_Ax" || rows["3"][col] != "" {
		t.Errorf("slots: series 2 %q, series 3 %q", rows["2"][col], rows["3"][col])
	}
	if w := "prep cannot read it: transfer syntax 1.2.840.10008.1.2.4.92 (a compressed transfer syntax) is not read"; !strings.Contains(rows["3"][why], w) {
		t.Errorf("review of series 3 does not say %q: %s", w, rows["3"][why])
	}
	man, _, err := prepare.Run(context.Background(), prepare.Options{Tasks: npcbench.Registry(configs.DefaultStructures()), Dataset: out,
		Out: filepath.Join(root, "prep"), Workers: 2, Params: smallParams()})
	if err != nil {
		t.Fatal(err)
	}
	if p := man.Patients[0]; len(p.Panels) != 2 || len(p.Failed) != 0 {
		t.Errorf("prep: %d panels, failed %+v", len(p.Panels), p.Failed)
	}
}

// importTreeAgain imports with opt and returns the result and the review
// table's rows by series number.
func importTreeAgain(t *testing.T, opt Options) (*Result, map[string][]string) {
	t.Helper()
	res, err := Import(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, reviewRows(t, opt.Out)
}
