package gpu_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

// BenchmarkSamplerTick8GPUs measures one sampler tick over the fake
// 8×A800 node with two engine processes per GPU: the NVML adapter, the
// energy bookkeeping and the process lookup, without host probing. Goal:
// under 1 ms of CPU per tick.
func BenchmarkSamplerTick8GPUs(b *testing.B) {
	f, _ := newFake(b, "a800-sxm-8")
	for g := range 8 {
		f.SetProcesses(g,
			nvml.FakeProcess{PID: 1000 + g, MemoryBytes: 60 << 30, Command: "vllm serve", Model: "qwen", Replica: "0"},
			nvml.FakeProcess{PID: 2000 + g, MemoryBytes: 1 << 30, Command: "python"})
	}
	src := f.Source()
	defer src.Close()
	s := &gpu.Sampler{Source: src, Clock: &stepClock{t0, time.Second}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Tick(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindows measures summarising an hour of 1 Hz samples of 8 GPUs.
func BenchmarkWindows(b *testing.B) {
	_, src := newFake(b, "a800-sxm-8")
	s := &gpu.Sampler{Source: src, Clock: &stepClock{t0, time.Second}}
	samples := make([]gpu.Sample, 3600)
	for i := range samples {
		samples[i], _ = s.Tick(context.Background())
	}
	for b.Loop() {
		gpu.Windows(samples, time.Minute)
	}
}

// BenchmarkSystemHost measures the host CPU and memory probe (gopsutil).
func BenchmarkSystemHost(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		gpu.SystemHost{}.Host(ctx)
	}
}

// BenchmarkHostProcessesCached measures describing a process seen before.
func BenchmarkHostProcessesCached(b *testing.B) {
	var h gpu.HostProcesses
	ctx := context.Background()
	pid := os.Getpid()
	h.Describe(ctx, pid)
	for b.Loop() {
		h.Describe(ctx, pid)
	}
}
