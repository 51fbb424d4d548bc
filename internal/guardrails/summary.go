package guardrails

// What the gateway records of a check: per guardrail, whether it ran and the strongest action
// it took, and per detector how many findings with what action. Read from the report and the
// rule, so recording walks two small arrays and never the findings.

// Runs reports whether guardrail g has any detector on in direction dir of the rule (the
// schema guardrail: whether arguments or structured content are validated). Computed when the
// rule is compiled: every check's record asks it of every guardrail.
func (r *Rule) Runs(g Guardrail, dir Direction) bool { return r.runs[dir]&(1<<g) != 0 }

// guardrailsRun computes what Runs answers: per direction, the set of guardrails that run.
func (r *Rule) guardrailsRun() (runs [numDirections]uint8) {
	for dir := range numDirections {
		for g := range numGuardrails {
			if r.computeRuns(g, dir) {
				runs[dir] |= 1 << g
			}
		}
	}
	return runs
}

func (r *Rule) computeRuns(g Guardrail, dir Direction) bool {
	if g == Schema {
		if dir == DirArguments {
			return r.validateArgs != Off
		}
		return dir == DirResult && r.validateOut != Off
	}
	d := &r.results
	if dir == DirArguments {
		d = &r.args
	}
	for k := range detectorTable {
		if detectorTable[k].g == g && d.on.has(Detector(k)) {
			return true
		}
	}
	return false
}

// GuardrailAction is the strongest action the check took on a finding of guardrail g; Off when
// it found nothing of g.
func (r *Report) GuardrailAction(g Guardrail) Action {
	a := Off
	if r.Action == Off {
		return Off // nothing found: no detector's count to read
	}
	for k := range detectorTable {
		if detectorTable[k].g == g && r.Counts[k] > 0 {
			a = max(a, r.acts[k])
		}
	}
	return a
}

// EachDetector calls fn for every detector with findings: its count and the action taken.
func (r *Report) EachDetector(fn func(det Detector, a Action, n int)) {
	for k, n := range r.Counts {
		if n > 0 {
			fn(Detector(k), r.acts[k], int(n))
		}
	}
}

// Add records a finding the caller made itself (a schema violation: DetInvalidArguments,
// DetInvalidStructuredContent) with action a at path, with note, as the detectors' findings
// are recorded.
func (r *Report) Add(det Detector, a Action, path, note string) {
	r.Counts[det]++
	r.acts[det] = max(r.acts[det], a)
	r.Action = max(r.Action, a)
	if len(r.Findings) < maxRecorded {
		r.Findings = append(r.Findings, Finding{Detector: det, Action: a, Path: path, Note: note})
	}
}
