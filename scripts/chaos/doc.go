// Command chaos puts npcorch under fire and measures it (issue 7).
//
//	go run ./scripts/chaos [-trials 20] [-seed 1] [-dir DIR] [-keep]
//	go run ./scripts/chaos -soak 10000 [-soak-concurrency 64]
//
// The chaos mode runs an undisturbed demo-sized campaign, then -trials
// trials of the same campaign in which, at a seeded moment, an engine's
// process group is SIGKILLed, an engine hangs, an engine answers 503, or
// npcorch itself is SIGKILLed and resumed. After every trial the score
// files must be byte-identical to the undisturbed run's, every request
// answered exactly once in a valid journal, and no process of the run
// alive. It prints one line per trial and the counts, and exits 1 on any
// mismatch.
//
// The soak mode streams -soak requests through npcorch's client, pool,
// runner and journal against fast simulated engines and reports peak RSS,
// CPU per request, throughput, and the RSS of the first and last thousand
// requests.
//
// The binary doubles as npcorch for the processes it starts (engine shim,
// simulated engine, campaign run): see trial.Dispatch.
//
// It owns its bench folder and the processes it starts; it must not touch
// anything else (see package trial).
package main
