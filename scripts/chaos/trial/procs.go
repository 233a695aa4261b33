package trial

import "github.com/npcorch/npcorch/launcher/proctest"

// isEngine reports whether p is a simulated engine's server process (not
// its shim, not a worker): `SELF sim-engine serve MODEL ...`.
func isEngine(p proctest.Proc) bool {
	return len(p.Argv) > 3 && p.Argv[1] == "sim-engine" && p.Argv[2] == "serve"
}
