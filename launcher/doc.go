// Package launcher owns the life of every engine process npcorch runs: how
// each engine kind (vllm, sglang, sim, wrapper, external) is invoked, port
// and API-key allocation, start-up and readiness, crash detection and
// restart with backoff, the stall watchdog, and stop-and-verify teardown of
// whole process groups, including when npcorch itself is killed (see Shim).
//
// A Replica is one engine serving one model on one GPU set. One goroutine
// owns each replica's state; public methods send it a request and wait for
// the reply, so no caller acts on a stale state. A Supervisor runs many
// replicas, hands out their Endpoints and broadcasts their Events. A
// Backend is what a run drives its replicas through: LocalBackend (a
// Supervisor on this machine) or package slurm's Replicas (Slurm jobs).
//
// The package decides nothing about placement or scheduling (subpackages
// placement and schedule do), reads no GPU itself (a MemoryProbe comes in
// from package gpu), and sends no benchmark request: it only proves that an
// engine answers before handing its endpoint out.
//
// Process-group handling uses Linux facilities (/proc, process groups and
// signals); npcorch targets Linux GPU nodes.
package launcher
