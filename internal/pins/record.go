package pins

import (
	"sort"
	"time"
)

// Drift records: what GET /pins and /readyz show, the audit line and the metric. Each backend
// keeps at most maxDriftRecords records of at most maxDriftBytes in all; drift beyond that is
// counted in BackendState.Omitted, not listed. An item that stays removed longer than the
// retention is dropped from the records (its pin stays).

const (
	// maxDriftRecords bounds the drift records kept per backend.
	maxDriftRecords = 1024
	// maxDriftBytes bounds their size per backend: the item names plus driftRecordBytes each.
	maxDriftBytes = 512 << 10
	// driftRecordBytes estimates one record without its name (fingerprints, classes, time).
	driftRecordBytes = 320
)

// itemRef names one item of one backend.
type itemRef struct {
	backend string
	kind    Kind
	key     string
}

// DriftRecord is one item's current drift, as the admin endpoint lists it.
type DriftRecord struct {
	Backend string  `json:"backend"`
	Kind    Kind    `json:"kind"`
	Key     string  `json:"name"`
	Classes []Class `json:"classes"`
	Action  Action  `json:"action"`
	Pinned  string  `json:"pinned,omitempty"`
	Current string  `json:"current,omitempty"`
	Shadows *Ref    `json:"shadows,omitempty"`
	// Waiting: the item is unverified only because its backend's first contact waits for
	// the restore window (Verdict.Waiting); not drift.
	Waiting bool      `json:"waiting,omitempty"`
	Since   time.Time `json:"since"`

	set Set
}

// BackendState is one backend's pinning state for /readyz.
type BackendState struct {
	Mode      Mode `json:"mode"`
	Drifted   int  `json:"drifted"`
	Blocked   int  `json:"blocked"`
	Confirmed int  `json:"confirmed"`
	// Omitted is the drift beyond the records' bounds: counted in Drifted, not listed.
	Omitted int `json:"omitted,omitempty"`
	// Waiting are the items withheld while the backend's first contact waits for the
	// restore window (DriftRecord.Waiting): not counted in Drifted.
	Waiting int `json:"waiting,omitempty"`
}

// backendDrift is one backend's drift records.
type backendDrift struct {
	records map[itemRef]*DriftRecord
	bytes   int
	omitted map[Kind]int
	// expired are removed items dropped after the retention, by their pin's fingerprint, so
	// that they are not recorded (and logged) again while they stay removed.
	expired map[itemRef]string
}

type driftEvent struct {
	ref itemRef
	v   Verdict
}

// record updates backend's drift for one list (kind) and writes one audit line, and counts the
// drift, for each item whose drift appeared or changed since the last list: never per request.
func (g *Guard) record(backend string, kind Kind, listed, removed map[string]Verdict) {
	now := g.now()
	g.mu.Lock()
	bd := g.drift[backend]
	if bd == nil {
		bd = &backendDrift{records: map[itemRef]*DriftRecord{}, omitted: map[Kind]int{}, expired: map[itemRef]string{}}
		g.drift[backend] = bd
	}
	// Records the list no longer has go first, so that they leave room for the new ones.
	still := map[itemRef]bool{}
	for _, vs := range []map[string]Verdict{listed, removed} {
		for key, v := range vs {
			if !v.Classes.Empty() {
				still[itemRef{backend, kind, key}] = true
			}
		}
	}
	bd.forget(kind, still)
	var events []driftEvent
	omitted := 0
	for _, vs := range []map[string]Verdict{listed, removed} {
		for _, key := range sortedKeys(vs) {
			v := vs[key]
			if v.Classes.Empty() {
				continue
			}
			ref := itemRef{backend, kind, key}
			switch ok, e := bd.update(ref, v, now, g.cfg.retention()); {
			case !ok:
				omitted++
			case e:
				events = append(events, driftEvent{ref, v})
			}
		}
	}
	grew := omitted > bd.omitted[kind]
	bd.omitted[kind] = omitted
	g.mu.Unlock()
	g.report(backend, kind, events)
	if grew {
		g.log.Warn("pin drift records full: further drifted items are counted, not listed", "backend", backend,
			"kind", string(kind), "omitted", omitted, "max_records", maxDriftRecords)
	}
}

// update records v for ref: ok is false when the bounds leave no room for it, event true when
// the drift appeared or changed.
func (bd *backendDrift) update(ref itemRef, v Verdict, now time.Time, retention time.Duration) (ok, event bool) {
	old := bd.records[ref]
	if old != nil && old.set == v.Classes && old.Current == v.Current && old.Pinned == v.Pinned && old.Waiting == v.Waiting {
		if v.Classes == Set(0).Add(ClassRemoved) && now.Sub(old.Since) > retention {
			bd.drop(ref)
			bd.expired[ref] = v.Pinned
		}
		return true, false
	}
	if pinned, ok := bd.expired[ref]; ok && pinned == v.Pinned && v.Classes == Set(0).Add(ClassRemoved) {
		return true, false // still removed, past the retention
	}
	delete(bd.expired, ref)
	size := len(ref.key) + driftRecordBytes
	if old == nil && (len(bd.records) >= maxDriftRecords || bd.bytes+size > maxDriftBytes) {
		return false, false
	}
	if old == nil {
		bd.bytes += size
	}
	bd.records[ref] = &DriftRecord{Backend: ref.backend, Kind: ref.kind, Key: ref.key, Classes: v.Classes.Classes(),
		Action: v.Action, Pinned: v.Pinned, Current: v.Current, Shadows: v.Shadows, Waiting: v.Waiting, Since: now, set: v.Classes}
	return true, true
}

// forget drops the records and expiries of kind that the last list no longer has.
func (bd *backendDrift) forget(kind Kind, still map[itemRef]bool) {
	for ref := range bd.records {
		if ref.kind == kind && !still[ref] {
			bd.drop(ref)
		}
	}
	for ref := range bd.expired {
		if ref.kind == kind && !still[ref] {
			delete(bd.expired, ref)
		}
	}
}

func (bd *backendDrift) drop(ref itemRef) {
	if _, ok := bd.records[ref]; ok {
		delete(bd.records, ref)
		bd.bytes -= len(ref.key) + driftRecordBytes
	}
}

// report writes the audit line and counts each event. An item withheld by the restore
// window's wait is not drift: the wait has its own line and count (awaitRestore).
func (g *Guard) report(backend string, kind Kind, events []driftEvent) {
	for _, e := range events {
		if e.v.Waiting {
			continue
		}
		attrs := []any{"backend", backend, "kind", string(kind), "name", e.ref.key,
			"classes", e.v.Classes.String(), "action", string(e.v.Action),
			"pinned", e.v.Pinned, "current", e.v.Current}
		if e.v.Shadows != nil {
			attrs = append(attrs, "shadows", e.v.Shadows.Backend+"/"+e.v.Shadows.Key)
		}
		g.log.Warn("pin drift", attrs...)
		if g.onDrift != nil {
			for _, cl := range e.v.Classes.Classes() {
				g.onDrift(backend, cl, e.v.Action)
			}
		}
	}
}

func sortedKeys(m map[string]Verdict) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Drift lists the current drift of every backend, sorted by backend, kind and name.
func (g *Guard) Drift() []DriftRecord {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	out := []DriftRecord{}
	for _, bd := range g.drift {
		for _, r := range bd.records {
			out = append(out, *r)
		}
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Backend != b.Backend {
			return a.Backend < b.Backend
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Key < b.Key
	})
	return out
}

// State returns backend's pinning state, nil when its definitions are not checked.
func (g *Guard) State(backend string) *BackendState {
	if !g.Enabled(backend) {
		return nil
	}
	s := &BackendState{Mode: g.cfg.ModeFor(backend)}
	g.mu.Lock()
	defer g.mu.Unlock()
	bd := g.drift[backend]
	if bd == nil {
		return s
	}
	for _, r := range bd.records {
		if r.Waiting {
			s.Waiting++
			continue
		}
		s.Drifted++
		switch r.Action {
		case ActionBlock:
			s.Blocked++
		case ActionConfirm:
			s.Confirmed++
		}
	}
	for _, n := range bd.omitted {
		s.Omitted += n
		s.Drifted += n
	}
	return s
}
