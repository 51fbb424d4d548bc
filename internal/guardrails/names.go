package guardrails

// Member names are text a backend or a model reads as much as values are: a tool that takes
// a map acts on its keys ({"env": {"AKIA…": ""}}), and a model reads the keys of a
// structuredContent. So they are scanned. A finding in a name is never redacted: the name is
// the structure (two names redacted to the same marker would make one member of two, which
// parsers resolve differently), so where a rule redacts, a name with a finding blocks the
// message instead. Its path is the object's that holds the member, so that neither a refusal
// nor an annotation repeats the name.

// memberName scans the member name raw[s:e].
func (w *walker) memberName(s, e int) {
	rep := w.sc.rep
	edits, found := len(rep.edits), len(rep.Findings)
	w.str(s, e)
	if len(rep.edits) == edits {
		return
	}
	rep.edits = rep.edits[:edits]
	for k := found; k < len(rep.Findings); k++ {
		if f := &rep.Findings[k]; f.Action == Redact {
			f.Action = Block
			rep.acts[f.Detector] = Block
		}
	}
	rep.Action = Block
}
