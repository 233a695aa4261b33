package imaging

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ExternalDecoder decompresses DICOM files whose transfer syntax the Go
// reader cannot decode (JPEG lossless and extended, JPEG-LS, RLE...): it
// returns the same file with uncompressed pixel data, which the Go reader
// then decodes, so the same pixels give the same output bytes whatever
// the transfer syntax.
type ExternalDecoder interface {
	Decompress(ctx context.Context, data []byte, syntax string) ([]byte, error)
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

// DCMTK decompresses through dcmtk's dcmdjpeg (JPEG), dcmdjpls (JPEG-LS)
// and dcmdrle (RLE), writing explicit VR little endian files to a
// temporary folder.
type DCMTK struct {
	// Runner runs the tools; nil means ExecRunner.
	Runner CommandRunner
	// TempDir holds the temporary files; "" means os.TempDir().
	TempDir string
}

// FindDCMTK returns a DCMTK decoder when dcmdjpeg is on PATH, else nil.
func FindDCMTK() ExternalDecoder {
	if _, err := exec.LookPath("dcmdjpeg"); err != nil {
		return nil
	}
	return DCMTK{}
}

// dcmtkTool is the dcmtk program that decompresses a transfer syntax.
func dcmtkTool(syntax string) (string, error) {
	switch {
	case syntax == "1.2.840.10008.1.2.5":
		return "dcmdrle", nil
	case syntax == "1.2.840.10008.1.2.4.80" || syntax == "1.2.840.10008.1.2.4.81":
		return "dcmdjpls", nil
	case strings.HasPrefix(syntax, "1.2.840.10008.1.2.4."):
		if n, err := strconv.Atoi(strings.TrimPrefix(syntax, "1.2.840.10008.1.2.4.")); err == nil && n >= 50 && n <= 70 {
			return "dcmdjpeg", nil
		}
	}
	return "", fmt.Errorf("transfer syntax %s (%s) is not decoded by npcorch nor by dcmtk's dcmdjpeg, dcmdjpls or dcmdrle; convert the series to an uncompressed transfer syntax first (e.g. gdcmconv --raw)", syntax, syntaxName(syntax))
}

// Decompress implements ExternalDecoder.
func (d DCMTK) Decompress(ctx context.Context, data []byte, syntax string) ([]byte, error) {
	tool, err := dcmtkTool(syntax)
	if err != nil {
		return nil, err
	}
	run := d.Runner
	if run == nil {
		run = ExecRunner{}
	}
	tmp, err := os.MkdirTemp(d.TempDir, "npcorch-dcmtk-")
	if err != nil {
		return nil, fmt.Errorf("dcmtk: %w", err)
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "in.dcm"), filepath.Join(tmp, "out.dcm")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, fmt.Errorf("dcmtk: %w", err)
	}
	if stderr, err := run.Run(ctx, tool, "+te", in, out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s could not decompress transfer syntax %s (%s): %w: %s", tool, syntax, syntaxName(syntax), err, bytes.TrimSpace(stderr))
	}
	native, err := readLimited(os.DirFS(tmp), "out.dcm", maxInputFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s wrote no file: %w", tool, err)
	}
	return native, nil
}
