// Package slurm runs a campaign's engine replicas as Slurm batch jobs, for
// clusters of GPU nodes that Slurm manages. It is the launcher's second
// backend: where the local Supervisor starts child processes, Backend
// submits one sbatch job per replica (--nodes=1 --gres=gpu:N, pinned to the
// node the campaign scheduler chose, with the campaign's partition, time
// limit, account, QOS and constraint), learns from a file the job writes
// where the engine listens, proves readiness over the network with the
// launcher's own rules (launcher.ProbeRemote), follows every job through
// squeue (sacct or scontrol once it has left the queue), re-submits a
// replica whose job died (node failure, preemption, time limit, scancel),
// and cancels every job it submitted when the campaign ends, is
// interrupted or fails. Pending time (queued in Slurm) is recorded apart
// from start-up time (running, not yet ready).
//
// Discover reads the cluster's nodes and free GPUs from `scontrol show
// node` and turns them into one placement.Node whose GPUs on different
// machines are joined by placement.LinkSeparate, so that the campaign
// scheduler spreads replicas over the cluster and never splits a TP group
// across nodes.
//
// The package owns sbatch scripts, Slurm output parsing, the job
// lifecycle and the run directory's slurm/ folder. It must not place or
// schedule models (packages placement and schedule do), start engine
// processes itself (Slurm does), or touch jobs it did not submit. Slurm's
// commands come in through Commander so that parsing and the lifecycle can
// be tested without a cluster; time, randomness and HTTP are fields.
package slurm
