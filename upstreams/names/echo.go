package names

import (
	"strconv"
	"unicode/utf8"
)

// MaxEcho bounds, in bytes, the name or URI an unknown-name answer quotes back to its caller.
const MaxEcho = 128

// Echo is name as an unknown-name answer quotes it back to the caller that sent it: cut to
// MaxEcho bytes at a character boundary, quoted with its control and other unprintable
// characters escaped (strconv.Quote), and "..." after the quote when it was cut. It is only
// ever part of the answer to that caller, never a log line.
func Echo(name string) string {
	cut := ""
	if len(name) > MaxEcho {
		i := MaxEcho
		for i > 0 && !utf8.RuneStart(name[i]) {
			i--
		}
		name, cut = name[:i], "..."
	}
	return strconv.Quote(name) + cut
}

// UnknownResourceMessage is the JSON-RPC error message (code -32602, HTTP 400) for a read of
// uri, the URI as the caller sent it, that names no resource or one the caller may not read:
// the gateway's own answer and a backend's result reduced to nothing by the caller's policy
// are the same bytes, so a caller cannot tell a hidden resource from a missing one.
func UnknownResourceMessage(uri string) string { return HiddenResourceMessage + " " + Echo(uri) }
