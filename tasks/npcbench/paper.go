package npcbench

import "github.com/npcorch/npcorch/launcher/schedule"

// imageSize is the size of an image the paper-scale counts assume.
type imageSize struct{ w, h int }

// The images of the paper's requests: a 512×1644 axial plane group
// (pathology overviews are counted as one), a 3×3 sequence panel and a 3×4
// structure card or CarePath MRI page of 512-pixel tiles.
var (
	planeGroup = imageSize{512, 1644}
	seqPanel   = imageSize{3 * 512, 3 * 512}
	cardPage   = imageSize{3 * 512, 4 * 512}
)

// mix is a request mix whose images are all of this size.
func (s imageSize) mix(m schedule.RequestMix) schedule.RequestMix {
	m.ImageTokens, m.ImagePixels = schedule.ImageTokens(s.w, s.h), s.w*s.h
	return m
}
