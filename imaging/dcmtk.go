package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ExternalDecoder decompresses DICOM files whose transfer syntax the Go
// reader cannot decode (JPEG lossless and extended, JPEG-LS, RLE, JPEG
// 2000): it returns the same file with uncompressed pixel data, which the
// Go reader then decodes, so the same pixels give the same output bytes
// whatever the transfer syntax.
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

// ErrNeedsTool is wrapped by the error (a *MissingToolError) for a file
// whose transfer syntax needs a program that is not installed.
var ErrNeedsTool = errors.New("a program that decompresses it is not installed")

// MissingToolError is the error for a file whose transfer syntax needs a
// program that is not installed: it names the program and its Debian
// package.
type MissingToolError struct {
	Syntax, Tool, Package string
}

func (e *MissingToolError) Error() string {
	return fmt.Sprintf("transfer syntax %s (%s) needs %s (Debian package %s) to decompress, which is not installed: install it, or convert the file to an uncompressed transfer syntax first", e.Syntax, SyntaxName(e.Syntax), e.Tool, e.Package)
}

func (e *MissingToolError) Unwrap() error { return ErrNeedsTool }

// decompressor is the program that decompresses a transfer syntax and its
// Debian package; args are its arguments to decompress in into out.
type decompressor struct {
	tool, pkg string
	args      func(in, out string) []string
}

// dcmtkArgs are dcmdjpeg's, dcmdjpls's and dcmdrle's: explicit VR little
// endian out.
func dcmtkArgs(in, out string) []string { return []string{"+te", in, out} }

// gdcmArgs are gdcmconv's: --raw decompresses (explicit VR little endian
// out), to exactly the pixels pydicom decodes.
func gdcmArgs(in, out string) []string { return []string{"--raw", in, out} }

// decompressorFor returns the program that decompresses a transfer
// syntax: dcmtk's dcmdjpeg (JPEG processes 1–14, .50–.70), dcmdjpls
// (JPEG-LS, .80 and .81), dcmdrle (RLE, 1.2.840.10008.1.2.5), GDCM's
// gdcmconv (JPEG 2000, .90 lossless only and .91); an error for any other.
func decompressorFor(syntax string) (decompressor, error) {
	dcmtk := func(tool string) (decompressor, error) { return decompressor{tool, "dcmtk", dcmtkArgs}, nil }
	switch {
	case syntax == "1.2.840.10008.1.2.5":
		return dcmtk("dcmdrle")
	case syntax == "1.2.840.10008.1.2.4.80" || syntax == "1.2.840.10008.1.2.4.81":
		return dcmtk("dcmdjpls")
	case syntax == "1.2.840.10008.1.2.4.90" || syntax == "1.2.840.10008.1.2.4.91":
		return decompressor{"gdcmconv", "libgdcm-tools", gdcmArgs}, nil
	case strings.HasPrefix(syntax, "1.2.840.10008.1.2.4."):
		if n, err := strconv.Atoi(strings.TrimPrefix(syntax, "1.2.840.10008.1.2.4.")); err == nil && n >= 50 && n <= 70 {
			return dcmtk("dcmdjpeg")
		}
	}
	return decompressor{}, fmt.Errorf("transfer syntax %s (%s) is not read: npcorch reads implicit and explicit VR little endian, explicit VR big endian, deflated, JPEG baseline itself, and with dcmtk or GDCM JPEG (.50–.70), JPEG-LS, RLE and JPEG 2000 (.90, .91); convert the file to an uncompressed transfer syntax first (e.g. gdcmconv --raw IN OUT, Debian libgdcm-tools)", syntax, SyntaxName(syntax))
}

// Decompressor says how npcorch reads pixel data in a transfer syntax:
// tool and pkg are "" where the Go reader decodes it itself, else the
// program that decompresses it and its Debian package; err refuses a
// transfer syntax npcorch does not read, saying which it reads.
func Decompressor(syntax string) (tool, pkg string, err error) {
	if nativeSyntaxes[syntax] || syntax == syntaxJPEGBaseline {
		return "", "", nil
	}
	dc, err := decompressorFor(syntax)
	return dc.tool, dc.pkg, err
}

// DecompressTools decompresses through dcmtk's dcmdjpeg (JPEG), dcmdjpls
// (JPEG-LS) and dcmdrle (RLE) and GDCM's gdcmconv (JPEG 2000), writing
// explicit VR little endian files to a temporary folder. A program that
// is not installed fails the files that need it with a *MissingToolError.
type DecompressTools struct {
	// Runner runs the tools; nil means ExecRunner (and the tools are
	// looked for on PATH first).
	Runner CommandRunner
	// TempDir holds the temporary files; "" means os.TempDir().
	TempDir string
}

// FindDecompressTools returns DecompressTools when dcmtk's dcmdjpeg or
// GDCM's gdcmconv is on PATH, else nil.
func FindDecompressTools() ExternalDecoder {
	for _, tool := range []string{"dcmdjpeg", "gdcmconv"} {
		if _, err := exec.LookPath(tool); err == nil {
			return DecompressTools{}
		}
	}
	return nil
}

// Decompress implements ExternalDecoder.
func (d DecompressTools) Decompress(ctx context.Context, data []byte, syntax string) ([]byte, error) {
	dc, err := decompressorFor(syntax)
	if err != nil {
		return nil, err
	}
	run := d.Runner
	if run == nil {
		if _, err := exec.LookPath(dc.tool); err != nil {
			return nil, &MissingToolError{syntax, dc.tool, dc.pkg}
		}
		run = ExecRunner{}
	}
	tmp, err := os.MkdirTemp(d.TempDir, "npcorch-decompress-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dc.tool, err)
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "in.dcm"), filepath.Join(tmp, "out.dcm")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, fmt.Errorf("%s: %w", dc.tool, err)
	}
	if stderr, err := run.Run(ctx, dc.tool, dc.args(in, out)...); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s could not decompress transfer syntax %s (%s): %w: %s", dc.tool, syntax, SyntaxName(syntax), err, bytes.TrimSpace(stderr))
	}
	native, err := readLimited(os.DirFS(tmp), "out.dcm", maxInputFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s wrote no file: %w", dc.tool, err)
	}
	return native, nil
}
