// Package gpu is npcorch's view of the GPUs of one node: what they are
// (inventory), how they are wired (topology), who uses them (processes) and
// how busy they are (samples, windows, model spans, the Prometheus exporter
// and the utilization report), and which node a command means: a NodeSpec
// (auto, nvml or fake:NAME, parsed once by ParseNodeSpec) and the one list
// of fake nodes (FakeNodeNames) that gpu/nvml and launcher/placement build.
//
// Everything here is plain Go over plain data and builds with
// CGO_ENABLED=0. The hardware comes in through the small [Source]
// interface; the only implementation that talks to the NVIDIA driver lives in
// the sub-package gpu/nvml, which is also the only code in npcorch that
// imports github.com/NVIDIA/go-nvml (its fake nodes included).
//
// A value the hardware did not report is a nil pointer here and null in
// JSON, never zero: users pick GPUs and report cost from these numbers.
//
// This package must not launch engines, decide placement or read the journal;
// it only offers facts (inventory, link classes, ranked GPU sets, samples and
// their summaries) to the launcher and report code.
package gpu
