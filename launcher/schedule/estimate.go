package schedule

import (
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// Estimator turns workloads and placements into times. Its zero value uses
// the defaults documented in the package comment.
type Estimator struct {
	// DecodeCost is how many prompt tokens one output token costs (0 = 5).
	DecodeCost float64
	// Startup estimates an engine's start-up at TP tp (nil = 90 s + 2 s per
	// GiB of weights on each GPU).
	Startup func(m configs.Model, tp int) time.Duration
	// Stop is the time to stop an engine and verify its GPUs (0 = 15 s).
	Stop time.Duration
	// NoPreprocessCeiling ignores the image-preprocessing ceiling: engines
	// run at their GPUs' rate whatever their images (the model before it
	// existed; for comparison).
	NoPreprocessCeiling bool
}

// Work returns w's token equivalents: prompt + DecodeCost × output.
func (e Estimator) Work(w Workload) float64 {
	d := e.DecodeCost
	if d <= 0 {
		d = 5
	}
	return float64(w.PromptTokens) + d*float64(w.OutputTokens)
}

// Speed returns the model's token equivalents per second per
// A800-equivalent: SpeedTokensPerS, or, when the registry sets none,
// 60,000 / ParamsB for dense models and 180,000 / ParamsB for MoE.
func (e Estimator) Speed(m configs.Model) float64 {
	switch {
	case m.SpeedTokensPerS > 0:
		return m.SpeedTokensPerS
	case m.ParamsB > 0 && m.MoE:
		return 180000 / m.ParamsB
	case m.ParamsB > 0:
		return 60000 / m.ParamsB
	}
	return 1000
}

// StartupTime returns the estimated start-up of model m at TP tp.
func (e Estimator) StartupTime(m configs.Model, tp int) time.Duration {
	if e.Startup != nil {
		return e.Startup(m, tp)
	}
	perGPU := float64(placement.WeightBytes(m)) / float64(max(tp, 1)) / (1 << 30)
	return 90*time.Second + time.Duration(perGPU*2*float64(time.Second))
}

// StopTime returns the time to stop an engine and verify its GPUs.
func (e Estimator) StopTime() time.Duration {
	if e.Stop > 0 {
		return e.Stop
	}
	return 15 * time.Second
}

// seconds converts a work amount at a rate into a duration, rounding up.
func seconds(work, rate float64) time.Duration {
	if rate <= 0 {
		return time.Duration(1<<63 - 1)
	}
	s := work / rate
	if s > 1e9 {
		return time.Duration(1<<63 - 1)
	}
	d := time.Duration(s * float64(time.Second))
	if float64(d) < s*float64(time.Second) {
		d++
	}
	return d
}
