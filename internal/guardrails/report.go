package guardrails

import (
	"errors"
	"sort"
)

// MetaKey is the member of a result's _meta in which the gateway names what its guardrails
// flagged or redacted in that result. The gateway owns it: a backend's own member of that
// name is removed from every result a rule covers.
const MetaKey = "io.mcp-gateway/guardrails"

// Direction is what a check looked at.
type Direction uint8

// The directions.
const (
	// DirArguments: a request's arguments, before it is forwarded.
	DirArguments Direction = iota
	// DirResult: a backend's answer (result or JSON-RPC error), before the client sees it.
	DirResult
	// DirNotification: a notification relayed while a request runs (progress, log).
	DirNotification
	numDirections
)

var directionNames = [numDirections]string{"arguments", "result", "notification"}

// String is the direction's name, a metric label value.
func (d Direction) String() string { return directionNames[d] }

// Directions returns the closed set of the direction label.
func Directions() []string { return append([]string(nil), directionNames[:]...) }

// Limits of one check.
const (
	// maxRecorded bounds the findings a Report lists (all are counted).
	maxRecorded = 64
	// maxEdits bounds the redactions of one message; a message that would need more is
	// blocked (ErrTooManyFindings): a result made mostly of matches is not a redacted result.
	maxEdits = 10000
)

// ErrTooManyFindings is a check that would redact more than maxEdits matches in one message.
var ErrTooManyFindings = errors.New("guardrails: too many matches to redact")

// Finding is one match, as reports, audit lines and annotations name it: the detector and where,
// never the matched text.
type Finding struct {
	Detector Detector
	Action   Action
	// Path is the RFC 6901 pointer of the string it is in, within the checked JSON (the
	// arguments, the result, the notification's params).
	Path string
	// Note says more where a detector has more to say without quoting the input: a schema
	// violation's keyword and constraint.
	Note string
}

// Report is what one check found.
type Report struct {
	// Rule is the id of the rule that decided the check.
	Rule string
	// Dir is what was checked.
	Dir Direction
	// Action is the strongest action among the findings; Off when there are none.
	Action Action
	// Findings are the first maxRecorded findings, in the order they were found.
	Findings []Finding
	// Counts counts the findings per detector, beyond maxRecorded too.
	Counts [numDetectors]uint32
	// acts is the action taken on each detector's findings.
	acts [numDetectors]Action
	// Err is why the check could not be completed (JSON nested too deeply, too many matches
	// to redact, a schema that does not compile); a message whose check failed is blocked.
	Err error

	edits []edit
	// meta is the span of the result's _meta object (or null), own that of the member of it
	// the gateway owns (both zero when absent).
	meta, own span
	// hidden: a blob's decoded text holds a character the second reading removes (blob.go).
	hidden bool
}

// span is raw[start:end].
type span struct{ start, end int }

// edit replaces raw[start:end] with text, or with the marker of det when text is nil.
type edit struct {
	start, end int
	det        Detector
	text       []byte
}

// maxKeptEdits bounds the redactions' buffer a reset report keeps for its next check.
const maxKeptEdits = 256

// Reset makes r the empty report of a check by rule in dir, keeping its buffers for the next
// check (a report kept per request; see Rule.ScanArgumentsInto).
func (r *Report) Reset(rule string, dir Direction) {
	findings, edits := r.Findings[:0], r.edits[:0]
	if cap(edits) > maxKeptEdits {
		edits = nil
	}
	clear(findings[:cap(findings)]) // no path of the last check is kept alive
	*r = Report{Rule: rule, Dir: dir, Findings: findings, edits: edits}
}

// Blocked reports whether the message must be refused: a finding whose action is block, or a
// check that failed (closed, since what could not be checked cannot be passed).
func (r *Report) Blocked() bool { return r != nil && (r.Action == Block || r.Err != nil) }

// Clean reports whether the check found nothing and failed in nothing.
func (r *Report) Clean() bool { return r == nil || (r.Action == Off && r.Err == nil) }

// Redacted reports whether the message has redactions to apply.
func (r *Report) Redacted() bool { return r != nil && len(r.edits) > 0 }

// First is the first finding with action a (the one a refusal names), nil when none is.
func (r *Report) First(a Action) *Finding {
	for k := range r.Findings {
		if r.Findings[k].Action == a {
			return &r.Findings[k]
		}
	}
	return nil
}

// msgScan is the state of one check that the walker reports to.
type msgScan struct {
	rep *Report
	// dir is the direction's actions; nil while the walker passes over a value it does not
	// scan.
	dir *direction
}

// found records the match of det over raw[start:end].
func (m *msgScan) found(det Detector, start, end int, w *walker) {
	if m.record(det, w) != Redact {
		return
	}
	if r := m.rep; len(r.edits) >= maxEdits {
		r.Err = ErrTooManyFindings
	} else {
		r.edits = append(r.edits, edit{start: start, end: end, det: det})
	}
}

// record counts a match of det and lists it, and returns the action on it (Off: not
// recorded).
func (m *msgScan) record(det Detector, w *walker) Action {
	if m.dir == nil {
		return Off
	}
	a := m.dir.actions[det]
	if a == Off {
		return Off
	}
	r := m.rep
	r.Counts[det]++
	r.acts[det] = a
	r.Action = max(r.Action, a)
	if len(r.Findings) < maxRecorded {
		r.Findings = append(r.Findings, Finding{Detector: det, Action: a, Path: w.pointer()})
	}
	return a
}

// sortEdits orders edits by position and merges those that overlap (a link that holds a
// token): the union is replaced with the marker of the first.
func sortEdits(edits []edit) []edit {
	sort.SliceStable(edits, func(a, b int) bool { return edits[a].start < edits[b].start })
	out := edits[:0]
	for _, e := range edits {
		if n := len(out); n > 0 && e.start < out[n-1].end && out[n-1].text == nil && e.text == nil {
			out[n-1].end = max(out[n-1].end, e.end)
			continue
		}
		out = append(out, e)
	}
	return out
}

// apply returns raw with the edits applied, in one new buffer.
func apply(raw []byte, edits []edit) []byte {
	edits = sortEdits(edits)
	n := len(raw)
	for _, e := range edits {
		n += editLen(e) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		if e.start < at {
			continue
		}
		out = append(out, raw[at:e.start]...)
		if e.text != nil {
			out = append(out, e.text...)
		} else {
			out = appendMarker(out, e.det)
		}
		at = e.end
	}
	return append(out, raw[at:]...)
}

func editLen(e edit) int {
	if e.text != nil {
		return len(e.text)
	}
	return len("[REDACTED:]") + len(e.det.String())
}

// appendMarker appends a redaction's typed marker, [REDACTED:<detector>]: plain ASCII, safe in
// any JSON string.
func appendMarker(b []byte, det Detector) []byte {
	b = append(b, "[REDACTED:"...)
	b = append(b, det.String()...)
	return append(b, ']')
}

// Marker is the text a redaction by det leaves in place of the match.
func Marker(det Detector) string { return string(appendMarker(nil, det)) }
