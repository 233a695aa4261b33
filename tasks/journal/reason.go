package journal

import "regexp"

// addressPort matches the host:port of an engine in a failure message.
var addressPort = regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]|localhost):\d+`)

// filePath matches an absolute file path in a failure message (an image
// the engine refused), after a space or a quote: not a URL's path.
var filePath = regexp.MustCompile("(^|[\\s'\"`])/[^\\s'\"`]+")

// NotRunReason is why a not-run record was not run, in a form that groups
// like failures: its last failure, with engine addresses blanked (a
// restarted replica has another port) and file paths too (an engine that
// refuses every image names each; the journal keeps them).
func NotRunReason(rec Record) string {
	if len(rec.Failures) == 0 {
		return "no attempt was made"
	}
	r := addressPort.ReplaceAllString(rec.Failures[len(rec.Failures)-1], "HOST:PORT")
	return filePath.ReplaceAllString(r, "${1}PATH")
}
