package guardrails

import "encoding/json"

// Rewriting what a check redacted or flagged. The rewrite is one new buffer: spans the check
// left alone are copied, matches replaced with their markers, and for a result the gateway's
// annotation put into _meta. A message the guardrails leave unchanged is never copied.

// Rewrite returns raw (the arguments the check looked at) with the redactions applied.
func (r *Report) Rewrite(raw []byte) []byte { return apply(raw, r.edits) }

// annotation is the value of MetaKey in a result's _meta.
type annotation struct {
	Rule     string           `json:"rule"`
	Findings []annotationItem `json:"findings"`
	// More counts the findings not listed.
	More int `json:"more,omitempty"`
}

type annotationItem struct {
	Guardrail string `json:"guardrail"`
	Detector  string `json:"detector"`
	Action    string `json:"action"`
	Path      string `json:"path"`
	// Source is "notification" for what a notification relayed before the result carried.
	Source string `json:"source,omitempty"`
}

// maxAnnotated bounds the findings a result's annotation lists.
const maxAnnotated = 32

// RewriteResult returns raw (the result the check looked at) with the redactions applied, the
// backend's own MetaKey member removed, and the flagged and redacted findings (those of the
// check, then notes: what the notifications relayed before it had) named under MetaKey in
// _meta; notesMore counts the notifications' flagged and redacted findings not in notes. changed is
// false when there was nothing to do, and raw is returned as it is.
func (r *Report) RewriteResult(raw []byte, notes []Finding, notesMore int) (out []byte, changed bool) {
	items, more := r.annotated(notes)
	more += notesMore
	if len(r.edits) == 0 && len(items) == 0 && more == 0 && r.own.end == 0 {
		return raw, false
	}
	edits := r.edits
	var member []byte
	if len(items) > 0 || more > 0 {
		if items == nil {
			items = []annotationItem{} // a list, if empty, when every one is past those listed
		}
		v, _ := json.Marshal(annotation{Rule: r.Rule, Findings: items, More: more})
		member = append([]byte(`"`+MetaKey+`":`), v...)
	}
	switch {
	case r.own.end > 0 && member != nil:
		edits = append(edits, edit{start: r.own.start, end: r.own.end, text: member})
	case r.own.end > 0:
		edits = append(edits, removeMember(raw, r.own))
	case member == nil:
	case r.meta.end > 0 && raw[r.meta.start] == 'n':
		// A _meta of null becomes the annotation's: a second _meta beside it would be a
		// duplicate member, and a client that keeps the last would read null.
		edits = append(edits, edit{start: r.meta.start, end: r.meta.end, text: append(append([]byte{'{'}, member...), '}')})
	case r.meta.end > 0:
		at := r.meta.start + 1
		if raw[skipWS(raw, at)] != '}' {
			member = append(member, ',')
		}
		edits = append(edits, edit{start: at, end: at, text: member})
	default:
		at := skipWS(raw, 0) + 1
		text := append(append([]byte(`"_meta":{`), member...), '}')
		if raw[skipWS(raw, at)] != '}' {
			text = append(text, ',')
		}
		edits = append(edits, edit{start: at, end: at, text: text})
	}
	return apply(raw, edits), true
}

// annotated lists the findings a result's annotation names: flagged and redacted ones. more
// counts those not listed, those past the report's recorded findings included: a result whose
// first findings were only logged is still annotated with what was redacted or flagged after
// them.
func (r *Report) annotated(notes []Finding) (items []annotationItem, more int) {
	total, listed := r.Marked(), 0
	add := func(f *Finding, source string) {
		if f.Action != Flag && f.Action != Redact {
			return
		}
		if source == "" {
			listed++
		}
		if len(items) >= maxAnnotated {
			more++
			return
		}
		items = append(items, annotationItem{Guardrail: f.Detector.Guardrail().String(), Detector: f.Detector.String(),
			Action: f.Action.String(), Path: f.Path, Source: source})
	}
	for k := range r.Findings {
		add(&r.Findings[k], "")
	}
	for k := range notes {
		add(&notes[k], "notification")
	}
	return items, more + max(total-listed, 0)
}

// Marked counts the report's flagged and redacted findings, listed in Findings or not: what
// an annotation names or counts.
func (r *Report) Marked() int {
	if r.Action < Flag {
		return 0 // nothing found beyond what was logged: the typical result
	}
	n := 0
	for d, c := range r.Counts {
		if a := r.acts[d]; a == Flag || a == Redact {
			n += int(c)
		}
	}
	return n
}

// removeMember is the edit that removes the member raw[m.start:m.end] from its object, with
// the comma that separates it from a neighbour.
func removeMember(raw []byte, m span) edit {
	if k := skipWS(raw, m.end); k < len(raw) && raw[k] == ',' {
		return edit{start: m.start, end: skipWS(raw, k+1), text: []byte{}}
	}
	k := m.start - 1
	for k > 0 && (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '\n' || raw[k] == '\r') {
		k--
	}
	if raw[k] == ',' {
		return edit{start: k, end: m.end, text: []byte{}}
	}
	return edit{start: m.start, end: m.end, text: []byte{}}
}
