// Package schedule runs a campaign's models on one node: it orders them to
// minimise the makespan, places their engines with package placement, hands
// GPUs freed by a finished model to the next one at once, adds replicas to
// the models still running when GPUs would otherwise idle, starts engines
// that share a GPU one at a time, re-plans when an engine fails to
// start, and re-plans when engines turn out faster or slower than the
// registry says.
//
// The design is llama-swap's router: ONE event loop (Run) feeds each Event
// to a Scheduler that decides and does no I/O; every action goes through
// the small Effects interface (start a replica, stop a replica), and each
// outcome comes back later as an Event. The same loop drives real engines
// (the launcher implements Effects and a Source) and the discrete-event
// Simulator, which implements both on a virtual clock with no processes.
// Tests drive the Scheduler synchronously with a recording fake.
//
// The package owns the scheduling policy, the work and time estimates, the
// paper-scale workload generator and the Plan it reports. It must not start
// processes, read GPUs or sleep; engines, lifecycle and NVML belong to the
// rest of the launcher and to package gpu.
//
// # Work and speed model
//
// A model's work is PromptTokens + DecodeCost × OutputTokens token
// equivalents (DecodeCost 5: a batched engine decodes roughly five times
// fewer tokens per second than it prefills). A replica processes
// configs.Model.SpeedTokensPerS × its placement throughput token equivalents
// per second, where throughput is in A800-equivalents (see package
// placement: TP efficiency by link class, KV-cache headroom, GPU speed).
// That is the GPUs' rate; a replica's API servers also cap it: they
// preprocess placement.Placement.ImagesPerS 512×1644 images per second (see
// package placement), and a workload carries its images (Workload.Images,
// ImagePixels). A model's workloads may come one per task; as the runner
// sends tasks one after the other, a replica's rate is the model's work
// divided by Σ over tasks of max(task work / GPU rate, task images /
// preprocessing rate). Rankings, first waves, scale-out and the bounds all
// use that rate. Replicas add linearly; an engine that shares a GPU with k
// ready engines gets 1/k of its rate (of the GPU part only, strictly; the
// estimate shares both). Work is treated as a fluid: requests spread over
// all replicas of a model, and all of them finish together; the task mix
// is taken as the same throughout a model's run. Start-up takes
// 90 s + 2 s per GiB of weights on each GPU; stopping and verifying 15 s.
//
// # Policy
//
// Models are taken longest-first by GPU-time at their most efficient
// placement (LPT). A model's first wave gets the fewest GPUs that would
// finish it within half the lower bound, at the highest-rate placement
// (preprocessing ceiling included) that keeps at least 80 % of its best
// per-GPU efficiency. A model whose replicas the campaign pins never
// scales out, so it comes first and its one wave takes the GPU count that
// minimises the campaign's estimated makespan, max(its duration, (the
// others' GPU-time + its GPUs × its duration) / GPU count); it waits for
// that many GPUs and the others fit around it. When
// no waiting model can use free GPUs, they go one replica at a time to the
// running model with the most remaining time, if that finishes it sooner
// despite the start-up. A start failure records the model's GPU set as
// failed; the model is re-planned elsewhere and reported after three
// failures. The crashes of a model's engines after they were ready
// (EventCrashed), all its replicas together, have a budget of their own
// (Policy.MaxModelRestarts): past it the model is abandoned, so that an
// engine that crashes on every request is not restarted replica after
// replica, each with a fresh budget of the backend's restarts.
//
// The policy decides online and can lose to running the models one at a
// time. New therefore simulates it first; when it ends after the
// sequential baseline (see Bounds), New simulates one model at a time too
// (each at its best TP × replicas, a dependent model once all it needs
// have ended) and keeps the sooner, saying so in Plan.Notes.
//
// # Measured speeds and re-planning
//
// Registry speeds are guesses. Engines report speed samples (EventSpeed):
// a replica did Work token equivalents and Images images over Seconds of
// serving, with its time to first token and, optionally, its model's
// share of work done (taken as EventProgress). The scheduler turns a
// sample into a GPU speed by inverting the mix: the speed at which the
// replica, at the share of its GPUs it had since its last sample, would
// have drained its model's mix at the measured rate. A replica whose
// images set its pace says little about its GPUs; the sample's weight is
// the square of the share of time its GPUs bind (0 when none do).
//
// The estimate is a two-level shrinkage of ln(true / registry speed):
// each model's is the node's plus its own. The node's is estimated from
// every measured model; each model's from its samples, shrunk towards the
// node's, trusting the samples more as they accumulate: a sample over t
// minutes has a log standard deviation of NoiseSD/√t (0.2/√t: a batched
// engine's rate swings with its prompt/decode mix within a minute; this
// is an assumption until real samples say otherwise). Prior SDs: 0.4 per
// model (a guess within 2× either way; log-uniform on [½, 2] has SD 0.40)
// and 0.3 for the node (its GPUs or engine version off from the A800
// baseline). Models not measured yet are taken at the node's factor.
// Scheduler.Speeds exports the state (Speeds, JSON) for the run folder.
//
// A re-plan happens when a running or waiting model's estimate moves from
// the factor the plan uses by more than both 10 % (a dead band, so the
// plan does not follow noise; a scale-out already needs a 5 % gain) and
// 3 standard deviations of the estimate (for an unmeasured model, of the
// node's: a campaign checks each model at every sample, over a thousand
// checks, so 2 SD would re-plan on noise several times a campaign); at
// most once per 5 minutes (the default sampling period). It
// takes the new speeds for the models that moved (rankings, live
// replicas' rates), sizes every waiting model's first wave against the
// campaign's lower bound at the speeds now known (as the first waves were
// sized against the registry's), orders them longest-first again, and
// records a Replan with its reason. Freed GPUs then go first to a running
// model whose own measurements corrected its speed and whose finish at
// that speed lies more than 1.25 × the remaining lower bound ahead (one
// replica at a time, while it shortens that finish), then to waiting
// models: a model measured as the registry says keeps the first wave it
// was given. ReplanPolicy.Off keeps the samples but plans as before.
//
// The Simulator's engines run at SpeedTruth's factors × the registry's
// speed and report samples every SampleEvery with seeded log-normal noise,
// so the same re-planning runs in simulation.
//
// # Bounds
//
// The lower bound is max(total GPU-time at each model's most efficient
// placement / GPU count, the longest model at its best whole-node
// placement), without start-up. The naive baseline runs one model at a time
// with one engine (its best single-engine TP), as the shell scripts do; the
// sequential baseline runs one model at a time at its best TP × replicas.
// Both baselines pay each engine's start-up and stop, and use the same API
// servers per engine as the plan (Policy.MaxAPIServers 1 gives vLLM's
// default of one, as the shell scripts run it).
package schedule
