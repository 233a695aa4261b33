// Command clientbench measures npcorch's streaming client against the
// simulated engine, side by side with a Python asyncio + aiohttp client
// (scripts/bench/client_bench.py) sending the same 80-image requests, once
// with file:// image URLs and once with base64 data URLs: client CPU time
// per request, peak resident memory and request body size. Two floor
// clients ("go-floor") send the same file:// body and read the answer
// without parsing it, through net/http and over a raw socket: what any Go
// client pays for the exchange alone. -decode-tps paces the engine like a
// real one (every event its own wake-up). With -mem it
// also runs npcorch's Runner over 1,000 and 10,000 requests, its items made
// one at a time by an item source, and reports peak memory, to show that it
// stays flat however large the dataset; -mem-list (on by default) repeats
// the largest run with the items in an in-memory list, for comparison.
//
// Usage (from the repository root):
//
//	go run ./scripts/bench/clientbench -out /tmp/clientbench [-requests 40] [-concurrency 4] [-decode-tps 80] [-mem]
//
// The binary plays every process itself: the simulated engine
// ("sim-engine" role, launcher/simengine.Main), the Go client ("go-client"),
// the floors ("go-floor") and the Go runner ("go-runner"), each a child process so that its CPU
// time and peak memory are its own. It writes the generated images, the
// engine's answer key and results.json under -out, and prints the
// Markdown tables of docs/BENCHMARKS.md. It touches nothing outside
// -out and starts nothing but its own children.
package main
