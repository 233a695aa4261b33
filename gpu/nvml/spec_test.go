package nvml

import "github.com/npcorch/npcorch/gpu"

// openSpec opens the node as a campaign file or --node writes it.
func openSpec(s string) (gpu.Source, error) {
	spec, err := gpu.ParseNodeSpec(s)
	if err != nil {
		return nil, err
	}
	return Open(spec)
}
