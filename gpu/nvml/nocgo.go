//go:build !cgo

package nvml

import (
	"fmt"

	"github.com/npcorch/npcorch/gpu"
)

// Load reports that this build cannot talk to NVML: go-nvml needs cgo.
func Load(node string) (gpu.Source, error) {
	return nil, gpu.ErrNVMLNotCompiled
}

// Fake is unavailable without cgo: the fake nodes are go-nvml mock servers.
type Fake struct{}

// NewFake reports that fake nodes need cgo.
func NewFake(name string) (*Fake, error) {
	return nil, fmt.Errorf("fake GPU node %q: %w (the fake nodes are go-nvml mocks)", name, gpu.ErrNVMLNotCompiled)
}

// Source is never reached: NewFake always fails without cgo.
func (f *Fake) Source() gpu.Source { return gpu.Absent{Reason: gpu.ErrNVMLNotCompiled.Error()} }

// Name returns "".
func (f *Fake) Name() string { return "" }

// SetFree reports that fake nodes need cgo.
func (f *Fake) SetFree(int, uint64) error { return gpu.ErrNVMLNotCompiled }

// SetProcesses reports that fake nodes need cgo.
func (f *Fake) SetProcesses(int, ...FakeProcess) error { return gpu.ErrNVMLNotCompiled }

// SetTimeline reports that fake nodes need cgo.
func (f *Fake) SetTimeline(int, ...Reading) error { return gpu.ErrNVMLNotCompiled }
