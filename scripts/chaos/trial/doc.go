// Package trial puts a campaign under fire: it runs a small campaign with
// simulated engines as real processes, injects one fault at a seeded moment
// (an engine's whole process group SIGKILLed, an engine that hangs
// mid-answer, an engine that answers 503, or npcorch itself SIGKILLed and
// started again with resume), and then proves that nothing was lost and
// nothing leaked: the score files are byte-identical to an undisturbed run,
// every request is answered exactly once in the journal, the journal reads
// cleanly, and no process of the run is left.
//
// npcorch runs in a child process (the CampaignRole of Dispatch) so that it
// can be killed; engines are started by it through the usual engine shim.
// The package owns only its bench directory and the processes it started;
// it must not signal any process that does not carry its trial directory
// on its command line or belong to a process group seen doing so.
package trial
