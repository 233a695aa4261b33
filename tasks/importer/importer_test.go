package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/imaging/mrseries"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/prepare"
)

// Orientations of the standard planes and of an oblique axial (30°).
var (
	axial    = [6]float64{1, 0, 0, 0, 1, 0}
	coronal  = [6]float64{1, 0, 0, 0, 0, -1}
	sagittal = [6]float64{0, 1, 0, 0, 0, -1}
	oblique  = [6]float64{1, 0, 0, 0, math.Cos(math.Pi / 6), math.Sin(math.Pi / 6)}
)

// acq is one series to write into a test tree.
type acq struct {
	patient, study string
	number         int
	desc           string
	o              [6]float64
	slices         int
	// edit changes each slice (timing, agent, modality, preamble).
	edit func(k int, s *imagingtest.DICOMSlice)
}

func (a acq) uid() string { return fmt.Sprintf("%s.%d", a.study, a.number) }

// dicom returns the slices of the series: 32×32 with texture, positions
// every 4 mm along the normal from −20 mm.
func (a acq) dicom() []imagingtest.DICOMSlice {
	o := a.o
	n := [3]float64{o[1]*o[5] - o[2]*o[4], o[2]*o[3] - o[0]*o[5], o[0]*o[4] - o[1]*o[3]}
	out := make([]imagingtest.DICOMSlice, a.slices)
	for k := range out {
		px := make([]uint16, 32*32)
		for i := range px {
			px[i] = uint16((i*37 + k*101 + a.number*13) % 4096)
		}
		d := -20 + 4*float64(k)
		out[k] = imagingtest.DICOMSlice{PatientID: a.patient, StudyUID: a.study, SeriesUID: a.uid(), SeriesDescription: a.desc,
			SeriesNumber: a.number, FrameOfReference: a.study + ".0", Instance: k + 1, Orientation: o,
			Position: [3]float64{d * n[0], d * n[1], d * n[2]}, Spacing: [2]float64{1, 1}, Thickness: 4,
			Rows: 32, Cols: 32, BitsStored: 12, Pixels: px}
		if a.edit != nil {
			a.edit(k, &out[k])
		}
	}
	return out
}

func t2(k int, s *imagingtest.DICOMSlice) { s.RepetitionTime, s.EchoTime = 4000, 100 }

func agent(k int, s *imagingtest.DICOMSlice) { s.ContrastAgent = "GADOVIST" }

// pacs is the test tree: how it is laid out, and its series.
//
//	P001  a CD: DICOMDIR (when dcmtk is there), DICOM/P1/S1/ holding all its
//	      series mixed, files named I0001… without extension, a few without
//	      the preamble; all seven slots, a localizer, a CT.
//	P002  one folder per series; an oblique T2, and a T1+C coronal without
//	      fat suppression: it lacks T2_Ax and T1+C_COR_FS.
//	P003  a repeated T1 axial (series 2 and 9), a fat-suppressed T1 axial,
//	      an unclassifiable series; labels ask for the sequence cohort.
//	0042  an ID a spreadsheet turned into "42".
var pacs = []acq{
	{"P001", "1.9.1", 1, "3-plane loc", axial, 3, func(k int, s *imagingtest.DICOMSlice) {
		s.Orientation = [][6]float64{axial, coronal, sagittal}[k]
	}},
	{"P001", "1.9.1", 2, "T1WI TRA", axial, 8, func(k int, s *imagingtest.DICOMSlice) { s.NoPreamble = k%3 == 0 }},
	{"P001", "1.9.1", 3, "T2 FS AX", axial, 8, t2},
	{"P001", "1.9.1", 4, "T1+C TRA", axial, 8, agent},
	{"P001", "1.9.1", 5, "T1WI COR", coronal, 6, nil},
	{"P001", "1.9.1", 6, "T1+C COR FS", coronal, 6, agent},
	{"P001", "1.9.1", 7, "T1WI SAG", sagittal, 5, nil},
	{"P001", "1.9.1", 8, "T1+C SAG", sagittal, 5, agent},
	{"P001", "1.9.1", 9, "HEAD", axial, 2, func(k int, s *imagingtest.DICOMSlice) { s.Modality = "CT" }},
	{"P002", "1.9.2", 1, "T1 TRA", axial, 8, nil},
	{"P002", "1.9.2", 2, "T2 OBL", oblique, 8, t2},
	{"P002", "1.9.2", 3, "T1 +C TRA", axial, 8, agent},
	{"P002", "1.9.2", 4, "T1 COR", coronal, 6, nil},
	{"P002", "1.9.2", 5, "T1 +C COR", coronal, 6, agent},
	{"P003", "1.9.3", 2, "T1 TRA", axial, 6, nil},
	{"P003", "1.9.3", 3, "T1 TRA FS", axial, 6, nil},
	{"P003", "1.9.3", 4, "SE 2", axial, 6, func(k int, s *imagingtest.DICOMSlice) { s.RepetitionTime, s.EchoTime = 1200, 45 }},
	{"P003", "1.9.3", 9, "T1 TRA", axial, 6, nil},
	{"0042", "1.9.4", 1, "T1 TRA", axial, 4, nil},
}

// writePACS writes the tree under root and returns, per series UID, its
// files relative to root.
func writePACS(t *testing.T, root string) map[string][]string {
	t.Helper()
	files := map[string][]string{}
	cd := 0
	for _, a := range pacs {
		for k, s := range a.dicom() {
			var name string
			switch a.patient {
			case "P001":
				cd++
				name = fmt.Sprintf("CD/DICOM/P1/S1/I%04d", cd)
			default:
				name = fmt.Sprintf("%s/%s/series%d/%d", a.patient, a.study, a.number, k+1)
			}
			mustWrite(t, filepath.Join(root, name), s.Encode())
			files[a.uid()] = append(files[a.uid()], name)
		}
	}
	for uid := range files {
		slices.Sort(files[uid])
	}
	mustWrite(t, filepath.Join(root, "CD", "README.TXT"), []byte("Burnt by the hospital's PACS"))
	mustWrite(t, filepath.Join(root, "P002", "Thumbs.db"), []byte{0xd0, 0xcf, 0x11, 0xe0})
	truncated := pacs[9].dicom()[0].Encode()
	mustWrite(t, filepath.Join(root, "P002", "broken"), truncated[:300])
	if _, err := exec.LookPath("dcmmkdir"); err == nil {
		cmd := exec.Command("dcmmkdir", "-q", "+I", "-Nrc", "-W", "+r", "+D", "DICOMDIR", "DICOM")
		cmd.Dir = filepath.Join(root, "CD")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dcmmkdir: %v %s", err, b)
		}
	} else {
		t.Log("dcmtk (dcmmkdir) is not installed: the tree has no DICOMDIR")
	}
	return files
}

func mustWrite(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

const labelsCSV = `patient_id,t_stage,n_stage,t_from,t_to,notes
P001,T3,N1,-20,8,complete
P002,T2,,-20,8,oblique T2
P003,,,,,repeat
42,T1,,,,leading zeros lost
`

// TestImportPACSTree imports the tree above and checks the dataset
// against one written by hand, the problems named, and that prep makes
// the images of the complete patient from it.
func TestImportPACSTree(t *testing.T) {
	root := t.TempDir()
	tree, out := filepath.Join(root, "export"), filepath.Join(root, "data")
	files := writePACS(t, tree)
	labels := filepath.Join(root, "labels.csv")
	mustWrite(t, labels, []byte(labelsCSV))

	res, err := Import(context.Background(), Options{DICOM: tree, Labels: labels, Out: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(seq, uid string) dataset.SeriesRef {
		r := dataset.SeriesRef{Sequence: seq}
		for _, f := range files[uid] {
			r.Files = append(r.Files, "dicom/"+f)
		}
		return r
	}
	cov := dataset.Coverage{T: dataset.Range{From: -20, To: 8}}
	want := dataset.Raw{Format: dataset.RawFormat, Name: "data", Patients: []dataset.Patient{
		{ID: "P001", Cohorts: []string{"sequence", "t_groups"}, TStage: "T3", NStage: "N1", Coverage: cov, Series: []dataset.SeriesRef{
			ref("T1_Ax", "1.9.1.2"), ref("T2_Ax", "1.9.1.3"), ref("T1+C_Ax", "1.9.1.4"), ref("T1_COR", "1.9.1.5"),
			ref("T1_SAG", "1.9.1.7"), ref("T1+C_SAG", "1.9.1.8"), ref("T1+C_COR_FS", "1.9.1.6")}},
		{ID: "P002", Cohorts: []string{"sequence", "t_groups"}, TStage: "T2", Coverage: cov, Series: []dataset.SeriesRef{
			ref("T1_Ax", "1.9.2.1"), ref("T1+C_Ax", "1.9.2.3"), ref("T1_COR", "1.9.2.4")}},
		{ID: "P003", Cohorts: []string{"sequence"}, Series: []dataset.SeriesRef{ref("T1_Ax", "1.9.3.9")}},
	}}
	checkDataset(t, out, want)

	var got []string
	for _, p := range res.Problems {
		got = append(got, p.String())
	}
	wantProblems := []string{
		"missing: patient P002: no T2_Ax series, which the plane groups of t_groups need; close: series 2 \"T2 OBL\" (1.9.2.2) is T2 oblique (30.0° from axial)",
		"missing: patient P002: no T1+C_COR_FS series, which the plane groups of t_groups need; close: series 5 \"T1 +C COR\" (1.9.2.5) is T1 +C coronal",
		"unclassified: patient P003: series 4 \"SE 2\" (1.9.3.4): weighting unknown: none in the description or protocol, and TR 1200 ms, TE 45 ms: no clear weighting; set its slot",
		"duplicate: patient P003: T1_Ax: 2 candidates (series 9 \"T1 TRA\" (1.9.3.9), series 2 \"T1 TRA\" (1.9.3.2)): chose series 9, the latest",
		"no_images: patient 42: row 5 of " + labels + ": no DICOM series of this PatientID in the tree (the tree has \"0042\": did a spreadsheet drop leading zeros?",
		"no_labels: patient 0042: 1 series in the tree, no row in " + labels,
		"unreadable: P002/broken: corrupt or truncated DICOM",
	}
	if len(got) != len(wantProblems) {
		t.Errorf("%d problems, want %d:\n%s", len(got), len(wantProblems), strings.Join(got, "\n"))
	}
	for _, w := range wantProblems {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("no problem %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	notes := strings.Join(res.Notes, "\n")
	for _, w := range []string{"labels: columns not used: notes", "skipped 2 files: not DICOM",
		"patient P002: no T1_SAG, T1+C_SAG series", "patient P001: a stage without its range: not in n_groups",
		// T staging's structures are not in a DICOM tree: said at import,
		// not found by the run one structure at a time.
		"2 patient(s) in t_groups without structures (P001, P002): T staging also asks which base structures are invaded"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes do not say %q:\n%s", w, notes)
		}
	}
	if _, err := exec.LookPath("dcmmkdir"); err == nil && (len(res.Tree.DICOMDIRs) != 1 || !strings.Contains(notes, "skipped 1 files: "+mrseries.ReasonDICOMDIR)) {
		t.Errorf("the DICOMDIR was not honoured: %v\n%s", res.Tree.DICOMDIRs, notes)
	}
	review, _ := os.ReadFile(filepath.Join(out, ReviewName))
	if n := strings.Count(string(review), "\n"); n != len(pacs)+1 {
		t.Errorf("review has %d lines, want a header and %d series", n, len(pacs))
	}
	for _, w := range []string{"localizer", "not MR", `T1 +C FS coronal`, "T1+C_COR_FS,", "oblique (30.0° from axial)",
		"candidate for T1_Ax: not chosen (fat-suppressed, and the slot prefers none): series 9 was"} {
		if !strings.Contains(string(review), w) {
			t.Errorf("review.csv does not say %q", w)
		}
	}

	// prep reads the imported dataset: P001's images are all made; P002's
	// missing series fail only the plane groups that need them.
	man, rep, err := prepare.Run(context.Background(), prepare.Options{Tasks: npcbench.Registry(configs.DefaultStructures()), Dataset: out, Out: filepath.Join(root, "prep"), Workers: 2,
		Params: smallParams(), External: noExternal{}})
	if err != nil {
		t.Fatal(err)
	}
	p1 := man.Patients[0]
	if p1.ID != "P001" || len(p1.Panels) != 7 || len(p1.TGroups) != 8+6 || len(p1.Failed) != 0 {
		t.Errorf("P001: %d panels, %d T groups, failed %+v", len(p1.Panels), len(p1.TGroups), p1.Failed)
	}
	for _, e := range rep.Errors {
		if e.Owner != "patient P002" {
			t.Errorf("prep error outside P002: %v", e)
		}
	}
	if len(man.Patients[1].Panels) != 3 || len(man.Patients[2].Panels) != 1 {
		t.Errorf("panels of P002 %d, P003 %d", len(man.Patients[1].Panels), len(man.Patients[2].Panels))
	}
}

func checkDataset(t *testing.T, out string, want dataset.Raw) {
	t.Helper()
	raw, err := dataset.LoadRaw(out, nil)
	if err != nil {
		t.Fatalf("the imported dataset does not load: %v", err)
	}
	gotJSON, _ := json.MarshalIndent(raw, "", " ")
	wantJSON, _ := json.MarshalIndent(want, "", " ")
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("dataset.json:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
}

func smallParams() imaging.Params {
	p := imaging.DefaultParams()
	p.Tile, p.Caption = 32, 8
	return p
}

// noExternal pins "no dcmtk": the tree is uncompressed.
type noExternal struct{}

func (noExternal) Decompress(context.Context, []byte, string) ([]byte, error) {
	return nil, fmt.Errorf("no external decoder in tests")
}
