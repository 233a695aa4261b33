package imaging

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// ExternalDecoder decodes DICOM files whose transfer syntax the Go reader
// cannot (JPEG lossless, JPEG-LS, RLE, JPEG 2000...). It returns 8-bit
// gray already windowed with win when win has a Width, else 16-bit gray
// that is a linear function of the modality values (windowed afterwards by
// percentiles).
type ExternalDecoder interface {
	DecodeDICOM(ctx context.Context, data []byte, syntax string, win Window) (image.Image, error)
}

// CommandRunner runs an external program; tests replace it.
type CommandRunner interface {
	Run(ctx context.Context, name string, args ...string) (stderr []byte, err error)
}

// ExecRunner runs programs with os/exec.
type ExecRunner struct{}

// Run runs name with args and returns its standard error.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.Bytes(), err
}

// DCMTK decodes through dcmtk's dcmj2pnm (JPEG, RLE, uncompressed) and
// dcml2pnm (JPEG-LS), writing PNG to a temporary folder.
type DCMTK struct {
	// Runner runs the tools; nil means ExecRunner.
	Runner CommandRunner
	// TempDir holds the temporary files; "" means os.TempDir().
	TempDir string
	// Limits bound the PNG the tool writes.
	MaxPixels int64
}

// FindDCMTK returns a DCMTK decoder when dcmj2pnm is on PATH, else nil.
func FindDCMTK() ExternalDecoder {
	if _, err := exec.LookPath("dcmj2pnm"); err != nil {
		return nil
	}
	return DCMTK{MaxPixels: DefaultLimits.MaxSlicePixels}
}

// jpegLS lists the JPEG-LS transfer syntaxes (dcml2pnm).
var jpegLS = map[string]bool{"1.2.840.10008.1.2.4.80": true, "1.2.840.10008.1.2.4.81": true}

// DecodeDICOM implements ExternalDecoder.
func (d DCMTK) DecodeDICOM(ctx context.Context, data []byte, syntax string, win Window) (image.Image, error) {
	run := d.Runner
	if run == nil {
		run = ExecRunner{}
	}
	tmp, err := os.MkdirTemp(d.TempDir, "npcorch-dcmtk-")
	if err != nil {
		return nil, fmt.Errorf("dcmtk: %w", err)
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "in.dcm"), filepath.Join(tmp, "out.png")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, fmt.Errorf("dcmtk: %w", err)
	}
	tool := "dcmj2pnm"
	if jpegLS[syntax] {
		tool = "dcml2pnm"
	}
	args := []string{"+on2"}
	if win.Width > 0 {
		args = []string{"+on", "+Ww", strconv.FormatFloat(win.Center, 'g', -1, 64), strconv.FormatFloat(win.Width, 'g', -1, 64)}
	}
	args = append(args, in, out)
	if stderr, err := run.Run(ctx, tool, args...); err != nil {
		return nil, fmt.Errorf("%s could not decode transfer syntax %s: %w: %s", tool, syntax, err, bytes.TrimSpace(stderr))
	}
	png, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("%s wrote no image: %w", tool, err)
	}
	max := d.MaxPixels
	if max <= 0 {
		max = DefaultLimits.MaxSlicePixels
	}
	return DecodeImage(png, max)
}
