// Package nvml connects npcorch to the GPUs of a node through NVIDIA's NVML
// library. It is the only package in npcorch that imports
// github.com/NVIDIA/go-nvml: the adapter from NVML calls to gpu.Source, the
// loader of the real driver, and the fake nodes (built on go-nvml's mock
// servers dgxa100, dgxh100 and dgxh200, so that fakes and real GPUs run the
// same adapter code).
//
// Open is the entry point: it opens a gpu.NodeSpec (auto, nvml or one of
// gpu.FakeNodeNames, parsed once by gpu.ParseNodeSpec). NewFake gives tests
// a fake node whose free memory, processes and telemetry timeline they
// script.
//
// go-nvml opens libnvidia-ml.so.1 at run time and needs cgo to compile:
//
//   - built with CGO_ENABLED=0, Load and the fakes return errors matching
//     gpu.ErrNVMLNotCompiled ("NVML support not compiled in"), and Open of auto
//     returns a gpu.Absent source that says so;
//   - built with cgo on a machine without the driver, Init reports
//     ERROR_LIBRARY_NOT_FOUND; Load returns an error matching gpu.ErrNoDriver
//     and Open of auto a gpu.Absent source saying "no NVIDIA driver found".
//
// Neither case crashes, and neither needs the caller to special-case it.
//
// This package must not interpret what it reads (ranking, windows, reports
// belong to package gpu) and must never invent a value: an NVML call that
// fails leaves its field nil.
package nvml
