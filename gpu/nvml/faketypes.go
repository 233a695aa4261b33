package nvml

// Reading is one step of a fake GPU's scripted timeline: what NVML reports
// during one Source.Sample call.
type Reading struct {
	GPUUtil, MemUtil uint32  // percent
	SMActivity       float64 // percent, reported through GPM where the GPU has it
	PowerMilliwatts  uint32
	EnergyMillijoule uint64 // the driver's counter; may go back to test resets
	TemperatureC     uint32
	SMClockMHz       uint32
	Throttle         uint64 // NVML clock event reason mask
}

// FakeProcess is a process a test places on a fake GPU. Model and Replica
// stand for the NPCORCH_MODEL and NPCORCH_REPLICA the launcher sets; empty
// means unset.
type FakeProcess struct {
	PID         int
	MemoryBytes uint64
	Command     string
	Model       string
	Replica     string
}
