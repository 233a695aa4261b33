package configs

import (
	"fmt"
	"strconv"
	"strings"
)

// ReferenceVLLM is the vLLM release npcorch's command lines and wire
// expectations are checked against (testdata/conformance): the release
// the paper used. An engine without engine.version is taken to run it.
const ReferenceVLLM = "0.19.1"

// Releases of vLLM that brought the flags npcorch passes only to engines
// that have them (engine.version is compared with these).
var (
	// VLLMAPIServerCount: --api-server-count (vLLM PR #17546, May 2025).
	VLLMAPIServerCount = MustRelease("0.9.0")
	// VLLMPromptTokensDetails: --enable-prompt-tokens-details (2024; the
	// V1 engine fills it since 0.9, vLLM issue #16162).
	VLLMPromptTokensDetails = MustRelease("0.6.4")
)

// Release is a parsed engine release: major, minor and patch numbers.
type Release [3]int

// ParseRelease reads "0.19.1", "v0.9", "0.8.5.post1" or "0.10.1rc2"
// (suffixes after the numbers are ignored). It needs at least a major and
// a minor number.
func ParseRelease(s string) (Release, error) {
	var r Release
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(s), "v"), ".", 4)
	if len(parts) < 2 {
		return r, fmt.Errorf("%q is not a release; write it as MAJOR.MINOR[.PATCH], e.g. 0.19.1", s)
	}
	for i := 0; i < len(parts) && i < 3; i++ {
		digits := parts[i]
		if i == len(parts)-1 || i == 2 {
			digits = leadingDigits(digits)
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n < 0 {
			return r, fmt.Errorf("%q is not a release; write it as MAJOR.MINOR[.PATCH], e.g. 0.19.1", s)
		}
		r[i] = n
	}
	return r, nil
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// AtLeast reports whether r is release o or later.
func (r Release) AtLeast(o Release) bool {
	for i := range r {
		if r[i] != o[i] {
			return r[i] > o[i]
		}
	}
	return true
}

// String writes r as MAJOR.MINOR.PATCH.
func (r Release) String() string { return fmt.Sprintf("%d.%d.%d", r[0], r[1], r[2]) }

// Release is the vLLM release the engine runs: Version, or ReferenceVLLM
// when it is empty. A Version that does not parse (the loader refuses
// one) counts as the reference release.
func (e Engine) Release() Release {
	v := e.Version
	if v == "" {
		v = ReferenceVLLM
	}
	r, err := ParseRelease(v)
	if err != nil {
		r, _ = ParseRelease(ReferenceVLLM)
	}
	return r
}

// Supports reports whether the engine's release is since or later.
func (e Engine) Supports(since Release) bool { return e.Release().AtLeast(since) }

// MustRelease parses a release literal of the program's own, like
// regexp.MustCompile; it panics on a malformed one.
func MustRelease(s string) Release {
	r, err := ParseRelease(s)
	if err != nil {
		panic("configs: " + err.Error())
	}
	return r
}
