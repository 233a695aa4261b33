// Package campaign runs a whole campaign: it reads the campaign file and
// the dataset (LoadBench, the one loader run, score and plan share), plans
// the node with the scheduler, starts and stops engine replicas through
// the launcher as the scheduler decides, streams every model's items
// through the task runner into the journal, samples the GPUs, and scores
// the run.
//
// It is the one place where the gpu, launcher and tasks packages meet; each
// of them stays ignorant of the others. It holds no global state: everything
// a run needs comes in through Options. A run's changing state (the
// scheduler, the replicas, the pools, the runners, the measurements) is
// owned by one goroutine, the driver's loop (loopstate.go, loop.go); engines run through
// a launcher.Backend (set up in backend.go): this machine's
// launcher.LocalBackend, or Slurm's slurm.Replicas.
//
// Run goes in four steps (campaign.go): the preflight checks everything
// the campaign names and reads the node before anything is written; the
// run folder is made, locked and given its event log and run.json; the
// driver (drive.go, loop.go) runs the engines and the runners; the end
// writes what was left unsent and the scores.
package campaign
