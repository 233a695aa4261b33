// Package simengine is npcorch's simulated inference engine: an
// OpenAI-compatible server that npcorch's launcher starts as a real child
// process in place of `vllm serve`, so that the launcher, the streaming
// client, the scheduler and the chaos suite can be exercised without a GPU.
//
// It owns vLLM's wire behaviour as serving.md records it: the port refuses
// connections while the model "loads" (the socket is bound but not
// listening), then /health, /v1/models, /v1/chat/completions (SSE and not),
// /metrics with vLLM's metric names, vLLM's error bodies and argument
// errors, the API key (--api-key, else VLLM_API_KEY as vLLM reads it) on /v1/*
// only, and worker children in the engine's
// process group (like EngineCore/Worker_TP*). Its latency follows token
// counts and configured speeds, with at most --max-num-seqs requests running.
// Its answers come from a sim key file (package launcher/simkey) and a
// policy (right=P with Decide, oracle, constant, garbage): a closed answer,
// a free text composed of an item's parts (each said or not by its own
// draw, compose.go), or a judge's JSON verdict on whether the response the
// request shows says a claim (wrong with the policy's complement, drawn per
// response). A response_format of json_object or json_schema is honoured as
// vLLM's structured outputs: the answer is forced into a JSON object
// (format.go). Faults (--sim-fault, POST /sim/fault) make it crash, hang,
// answer 503 or put errors inside a stream.
//
// Main is the entry point; a process running it re-executes its own binary
// for the workers (SelfEnv says how). The package must not touch anything
// outside its own process group: no GPU, no network beyond its listener, no
// file outside --sim-key and --allowed-local-media-path. It knows nothing
// of npcorch's datasets, tasks or launcher.
package simengine
