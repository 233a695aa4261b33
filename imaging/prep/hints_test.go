package prep

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/npcorch/npcorch/imaging"
)

// TestHintsOncePerPackage: images that need a decompressing program that
// is not installed are told once per Debian package what to install.
func TestHintsOncePerPackage(t *testing.T) {
	rle := &imaging.MissingToolError{Syntax: "1.2.840.10008.1.2.5", Tool: "dcmdrle", Package: "dcmtk"}
	jls := &imaging.MissingToolError{Syntax: "1.2.840.10008.1.2.4.80", Tool: "dcmdjpls", Package: "dcmtk"}
	j2k := &imaging.MissingToolError{Syntax: "1.2.840.10008.1.2.4.90", Tool: "gdcmconv", Package: "libgdcm-tools"}
	wrap := func(e error) FileError {
		return FileError{Owner: "patient P1", Output: "P1/x.png", Err: fmt.Errorf("dicom IM1: %w", e)}
	}
	errs := []FileError{wrap(j2k), wrap(rle), wrap(errors.New("other")), wrap(j2k), wrap(jls)}
	want := []string{
		"2 images need gdcmconv to decompress DICOM: install it (Debian: apt-get install libgdcm-tools) and run prep again",
		"2 images need dcmtk to decompress DICOM: install it (Debian: apt-get install dcmtk) and run prep again",
	}
	if got := hints(errs); !slices.Equal(got, want) {
		t.Errorf("hints\n%q\nwant\n%q", got, want)
	}
}
