// Package simscript is the scripted-conversation format of npcorch's
// simulated engine for tool-calling agents: per (system, case) a list of
// assistant turns — tool calls (name and the raw argument string, as a
// model emits them) or a final content — each with an optional defect
// marker, found by a key derived from the request's system and first user
// message. It owns the format, the key, what the engine emits for a turn
// (Rendered) and the check that a request's history is the script so far
// (Check). It knows nothing of benchmarks, tasks, EHRs or engines' I/O:
// package tasks writes script files, launcher/simengine reads them.
package simscript
