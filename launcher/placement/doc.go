// Package placement decides where a model's engines can run on one GPU
// node: which tensor-parallel (TP) sizes are valid for the model, which GPU
// sets keep a TP group on the best interconnect, how many data-parallel
// replicas to run, and why every other choice was rejected.
//
// It follows the shape of Nomad's scheduler, without its plumbing: a
// feasibility step that filters TP sizes and GPUs and records each rejection
// with a named Reason and a sentence that names the model and the GPUs; a
// ranking step that scores candidate GPU groups by link class, NUMA locality
// and what they leave for others; and a selection step (Result.Best,
// Result.BestWithin) that picks by estimated throughput.
//
// Everything here is a pure function over plain data: Node and GPU are this
// package's own types, and models come as configs.Model. NodeFromGPU adapts
// the gpu package's inventory and topology into a Node, and ReadNode reads
// them through a gpu.Source the caller opened (or builds a fake node's
// shape, FakeNode). The package starts no process, keeps no state and does
// not touch the launcher's engines.
//
// # Memory rules
//
// A model's footprint is weights × 1.2 + 2 GiB, split evenly over its TP
// group. At TP t a GPU is usable when the footprint / t fits within
// gpu_memory_utilization × its total memory AND its free memory is at least
// gpu_memory_utilization × its total memory (vLLM refuses to start
// otherwise). The weights are WeightBytes, or 2 bytes per parameter when only
// ParamsB is known.
//
// # TP rules
//
// TP sizes are powers of two no larger than the node. A size must divide the
// attention heads, the vision tower's heads (where set) and the vocabulary
// (where set). For KV heads (where set) vLLM's own rule applies: TP divides
// the KV heads, or the KV heads divide TP (each KV head is then replicated).
//
// # Throughput model
//
// Throughput is counted in A800-equivalents: one A800 running one replica of
// the model at full efficiency is 1.0. A TP group of t GPUs whose worst link
// is class L yields
//
//	Node.Speed × t × d(L)^log2(t) × kv
//
// where d is the efficiency kept per doubling of TP (NVLink 0.85, PCIe switch
// 0.75, host bridge 0.70, same NUMA node 0.65, across sockets 0.55; 0.10
// less for dense models under 12 B parameters, whose small matrices scale
// worse), and kv = min(1, room / (0.25 × budget)) penalises a group whose
// per-GPU budget leaves less than a quarter for the KV cache (long
// multimodal requests need it to batch). Replicas add linearly. These are
// planning estimates, not measurements; they only have to rank choices.
//
// # Image preprocessing
//
// Before an image reaches the GPU, the engine's API server process decodes,
// resizes, normalises and patchifies it, on one core (the GIL; vLLM's
// multimodal executor has one worker), and nothing of it shows in
// num_requests_waiting. Each replica therefore has a preprocessing ceiling,
// Placement.ImagesPerS = APIServers × PreprocessRate, in 512×1644 images per
// second (larger images cost in proportion to their pixels). A larger TP
// does not raise it; more replicas or more API servers do. Package schedule
// combines it with the work's images to get a replica's real rate.
//
// PreprocessRate is the registry's preprocess_images_per_s, or 20: 512×1644
// plane groups through the Qwen2-VL processor's steps (decode, RGB,
// bicubic resize to multiples of 28, normalise, patchify) took 46–60 ms of
// CPU per image in Pillow + numpy (testdata/preprocess_proxy.py) and 58–62
// ms in the Go proxy (BenchmarkPreprocessProxy) on this project's 2-core
// EPYC VM; vLLM issue #58266 measured 14 images/s of 1275×1650 (2.5× the
// pixels) through a whole vLLM API server. vLLM's own overhead around the
// processor is not in the proxies.
//
// APIServers is a choice placement makes per TP size: vLLM's
// --api-server-count N runs N API server processes that share one engine,
// each with its own preprocessing. An engine gets the node's CPU cores
// (Node.CPUs) in proportion to its GPUs, less one core per TP worker and
// one for the engine core, one core per API server, at most
// Constraints.MaxAPIServers (default DefaultMaxAPIServers, 4: beyond it the
// engine core's single input thread, which copies every image's pixel
// tensor, is the next limit, and it is not modelled). vLLM from 0.9.0 (by
// engine.version, whatever engine.command says) and the simulated engine
// take the flag (ScalesAPIServers); older forks, SGLang and wrappers keep
// one. Unknown cores mean one. A text-only model (configs.Model.TextOnly)
// preprocesses no image: it keeps one API server and has no ceiling
// (ImagesPerS 0).
package placement
