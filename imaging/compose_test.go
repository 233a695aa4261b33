package imaging

import (
	"context"
	"image"
	"image/color"
	"strings"
	"testing"
)

func uniformSeries(t *testing.T, seq string, orient [6]float64, values []uint8, size int) *Series {
	t.Helper()
	m := SeriesMeta{Sequence: seq, FrameOfReference: "F", Orientation: orient, PixelSpacing: [2]float64{1, 1}, SliceThickness: 3}
	var imgs []*image.Gray
	n, _ := m.Normal()
	for i, v := range values {
		p := [3]float64{n[0] * 3 * float64(i), n[1] * 3 * float64(i), n[2] * 3 * float64(i)}
		m.Slices = append(m.Slices, SliceMeta{File: "f.png", Instance: i + 1, Position: p})
		g := image.NewGray(image.Rect(0, 0, size, size))
		for j := range g.Pix {
			g.Pix[j] = v
		}
		imgs = append(imgs, g)
	}
	s, err := MemorySeries(m, imgs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var axial = [6]float64{1, 0, 0, 0, 1, 0}
var coronal = [6]float64{1, 0, 0, 0, 0, -1}

func TestAxialGroupGeometry(t *testing.T) {
	p := DefaultParams()
	t1 := uniformSeries(t, SeqT1Ax, axial, []uint8{10, 11}, 256)
	t2 := uniformSeries(t, SeqT2Ax, axial, []uint8{20, 21}, 256)
	tc := uniformSeries(t, SeqT1CAx, axial, []uint8{30, 31}, 256)
	groups, rej, err := PlanGroups(PlaneAxial, []*Series{t1, t2, tc}, nil)
	if err != nil || len(rej) != 0 || len(groups) != 2 {
		t.Fatalf("groups %d, rejections %v, err %v", len(groups), rej, err)
	}
	// Superior first: z = 3 (values 11, 21, 31) before z = 0.
	if groups[0].Position != 3 {
		t.Fatalf("first group at %v, want the superior slice at 3 mm", groups[0].Position)
	}
	img, err := RenderPlaneGroup(context.Background(), p, groups[0])
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect.Dx() != 512 || img.Rect.Dy() != 1644 {
		t.Fatalf("axial group is %v, want 512x1644", img.Rect.Size())
	}
	for k, want := range []uint8{11, 21, 31} {
		top := k * 548
		// Tile area: exactly the slice value everywhere.
		for _, pt := range []image.Point{{0, top + 36}, {511, top + 36}, {0, top + 547}, {511, top + 547}, {256, top + 300}} {
			if got := img.GrayAt(pt.X, pt.Y).Y; got != want {
				t.Errorf("tile %d pixel %v = %d, want %d", k, pt, got, want)
			}
		}
		// Caption band: only black and white, with some text.
		white := 0
		for y := top; y < top+36; y++ {
			for x := 0; x < 512; x++ {
				switch img.GrayAt(x, y).Y {
				case 255:
					white++
				case 0:
				default:
					t.Fatalf("caption band of tile %d has gray at %d,%d", k, x, y)
				}
			}
		}
		if white == 0 {
			t.Errorf("caption band of tile %d is empty", k)
		}
	}
}

func TestCoronalGroupGeometry(t *testing.T) {
	fs := uniformSeries(t, SeqT1CCorFS, coronal, []uint8{40, 41, 42}, 128)
	t1 := uniformSeries(t, SeqT1Cor, coronal, []uint8{50, 51, 52}, 128)
	groups, _, err := PlanGroups(PlaneCoronal, []*Series{fs, t1}, nil)
	if err != nil || len(groups) != 3 {
		t.Fatalf("%d groups, %v", len(groups), err)
	}
	// Anterior (lowest y) first.
	if groups[0].Rows[0].Index != 0 || groups[2].Rows[0].Index != 2 {
		t.Fatalf("coronal order %v", groups)
	}
	img, err := RenderPlaneGroup(context.Background(), DefaultParams(), groups[1])
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect.Dx() != 512 || img.Rect.Dy() != 1096 {
		t.Fatalf("coronal group is %v, want 512x1096", img.Rect.Size())
	}
	if img.GrayAt(100, 36).Y != 41 || img.GrayAt(100, 548+36).Y != 51 {
		t.Errorf("T1+C FS must be on top of T1: %d, %d", img.GrayAt(100, 36).Y, img.GrayAt(100, 584).Y)
	}
}

func TestFitTileKeepsPhysicalAspect(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 200, 100))
	for i := range g.Pix {
		g.Pix[i] = 90
	}
	tile, fit, err := FitTile(g, [2]float64{1, 1}, 512)
	if err != nil {
		t.Fatal(err)
	}
	if fit != (Fit{X: 0, Y: 128, W: 512, H: 256, SrcW: 200, SrcH: 100}) {
		t.Fatalf("fit %+v", fit)
	}
	if tile.GrayAt(5, 127).Y != 0 || tile.GrayAt(5, 128).Y != 90 || tile.GrayAt(5, 383).Y != 90 || tile.GrayAt(5, 384).Y != 0 {
		t.Error("letterbox bands wrong")
	}
	// Anisotropic pixels: 100x100 pixels of 1 mm rows × 2 mm columns are
	// twice as wide as tall.
	_, fit, _ = FitTile(image.NewGray(image.Rect(0, 0, 100, 100)), [2]float64{1, 2}, 512)
	if fit.W != 512 || fit.H != 256 {
		t.Errorf("anisotropic fit %+v", fit)
	}
}

func TestCardBoxToThePixel(t *testing.T) {
	p := DefaultParams()
	series := map[string]*Series{}
	for i, seq := range CardSequences {
		o := axial
		if seq == SeqT1CCorFS {
			o = coronal
		}
		series[seq] = uniformSeries(t, seq, o, []uint8{uint8(100 + i), uint8(110 + i), uint8(120 + i), uint8(130 + i)}, 256)
	}
	var boxes []SliceBox
	for _, seq := range CardSequences {
		// Largest box on instance 3 (index 2): columns show indices 1,2,3.
		boxes = append(boxes,
			SliceBox{Sequence: seq, Instance: 2, Rect: image.Rect(5, 5, 10, 10)},
			SliceBox{Sequence: seq, Instance: 3, Rect: image.Rect(10, 20, 50, 60)})
	}
	cells, err := CardCells(p, "longus_capitis/left", boxes, series)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 12 || cells[0].Index != 1 || cells[1].Index != 2 || cells[2].Index != 3 {
		t.Fatalf("cells %+v", cells[:3])
	}
	m, err := RenderGrid(context.Background(), p, 3, cells)
	if err != nil {
		t.Fatal(err)
	}
	pal, ok := m.(*image.Paletted)
	if !ok {
		t.Fatalf("card is %T, want *image.Paletted", m)
	}
	if pal.Rect.Dx() != 1536 || pal.Rect.Dy() != 2048 {
		t.Fatalf("card is %v, want 1536x2048", pal.Rect.Size())
	}
	isYellow := func(x, y int) bool { return pal.At(x, y) == color.Color(Yellow) }
	// Row 2 (T1+C_Ax), column 2 (index 2, its own box 10,20-50,60 → 20,40-100,120 at 2x).
	ox, oy := 512, 2*512
	for _, c := range []struct {
		x, y int
		want bool
	}{
		{20, 40, true}, {22, 42, true}, {23, 43, false}, {99, 119, true}, {100, 120, false},
		{19, 40, false}, {60, 40, true}, {60, 42, true}, {60, 43, false},
	} {
		if got := isYellow(ox+c.x, oy+c.y); got != c.want {
			t.Errorf("pixel %d,%d yellow=%v, want %v", c.x, c.y, got, c.want)
		}
	}
	// Column 1 (index 1) has its own small box 5,5-10,10 → 10,10-20,20.
	if !isYellow(10, 10) || isYellow(20, 40) {
		t.Error("column 1 must outline its own box")
	}
	// Column 3 (index 3) has no box: the row's largest box is drawn.
	if !isYellow(1024+20, 40) {
		t.Error("column 3 must outline the row's largest box")
	}
	// Grays are kept exactly.
	if got := pal.At(512+300, 300); got != (color.Gray{Y: 110 + 0 + 10}) && got != (color.Gray{Y: 120}) {
		t.Errorf("gray at 812,300 = %v", got)
	}
	// Missing sequence row.
	delete(series, SeqT2Ax)
	if _, err := CardCells(p, "longus_capitis/left", boxes, series); err == nil || !strings.Contains(err.Error(), "longus_capitis/left") {
		t.Errorf("a card without its T2 series must fail, naming the finding: %v", err)
	}
}

// TestCardInvertedBoxIsEmpty: a box given with its corners swapped is
// empty (as the dataset format defines x1, y1 exclusive), not flipped
// into a box the annotator never drew.
func TestCardInvertedBoxIsEmpty(t *testing.T) {
	p := DefaultParams()
	series := map[string]*Series{}
	var boxes []SliceBox
	for _, seq := range CardSequences {
		series[seq] = uniformSeries(t, seq, axial, []uint8{1, 2, 3, 4}, 32)
		boxes = append(boxes, SliceBox{Sequence: seq, Instance: 2, Rect: image.Rect(5, 5, 10, 10)})
	}
	if _, err := CardCells(p, "clivus", boxes, series); err != nil {
		t.Fatal(err)
	}
	boxes[1].Rect = image.Rectangle{Min: image.Pt(10, 10), Max: image.Pt(5, 5)}
	_, err := CardCells(p, "clivus", boxes, series)
	if err == nil || !strings.Contains(err.Error(), "card clivus: empty box on T2_Ax instance 2") {
		t.Errorf("inverted box: %v, want an empty-box error", err)
	}
}

func TestPanelAndPageCells(t *testing.T) {
	p := DefaultParams()
	s := uniformSeries(t, SeqT1Sag, [6]float64{0, 1, 0, 0, 0, -1}, make([]uint8, 20), 16)
	cells := PanelCells(p, s)
	want := []int{1, 3, 5, 7, 10, 12, 14, 16, 18}
	for i, c := range cells {
		if c.Index != want[i] {
			t.Fatalf("panel indices %v, want %v", cells, want)
		}
	}
	series := map[string]*Series{}
	for _, seq := range p.PageRows {
		series[seq] = uniformSeries(t, seq, axial, make([]uint8, 59), 16)
	}
	var all []int
	for page := 0; page < p.Pages; page++ {
		cells, err := PageCells(p, page, series)
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) != 12 || cells[0].Series.Meta.Sequence != SeqT1Ax || cells[11].Series.Meta.Sequence != SeqT1CCorFS {
			t.Fatalf("page %d layout wrong", page)
		}
		all = append(all, cells[0].Index, cells[1].Index, cells[2].Index)
	}
	if len(all) != 30 || all[0] != 0 || all[29] != 58 || all[1] != 2 {
		t.Errorf("30 positions from first to last slice: %v", all)
	}
}
