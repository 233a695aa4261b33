//go:build !cgo

package nvml

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/gpu"
)

func TestWithoutCgo(t *testing.T) {
	if _, err := Load("here"); !errors.Is(err, gpu.ErrNVMLNotCompiled) {
		t.Errorf("Load = %v", err)
	}
	if _, err := openSpec("nvml"); !errors.Is(err, gpu.ErrNVMLNotCompiled) {
		t.Errorf("Open(nvml) = %v", err)
	}
	if _, err := openSpec("fake:a800-sxm-8"); !errors.Is(err, gpu.ErrNVMLNotCompiled) {
		t.Errorf("Open(fake) = %v", err)
	}
	src, err := openSpec("auto")
	if err != nil {
		t.Fatal(err)
	}
	inv, _ := src.Inventory(context.Background())
	if len(inv.GPUs) != 0 || !strings.Contains(inv.Reason, "CGO_ENABLED=0") {
		t.Errorf("auto without cgo: %+v", inv)
	}
}
