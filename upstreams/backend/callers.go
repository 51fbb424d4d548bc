package backend

import (
	"container/list"
	"time"
)

// streak is a breaker's run of failures towards opening the shared circuit: how many count,
// whether one was charged to no caller, and what each caller added. It holds at most
// max(threshold, minCallers) callers: each new one adds a counted failure, and the circuit
// opens (and the streak is reset) once threshold are counted from minCallers callers.
type streak struct {
	counted     int
	independent bool
	callers     []streakCaller
}

type streakCaller struct {
	key string
	n   int
}

// add counts one failure charged to key, a caller's at most share times.
func (s *streak) add(key string, share int) {
	if key == chargeNone {
		s.counted++
		s.independent = true
		return
	}
	for i := range s.callers {
		if c := &s.callers[i]; c.key == key {
			if c.n < share {
				c.n++
				s.counted++
			}
			return
		}
	}
	s.callers = append(s.callers, streakCaller{key: key, n: 1})
	s.counted++
}

// wide reports whether the failures are everyone's business: one was charged to no caller, or
// they came from at least minCallers callers.
func (s *streak) wide(minCallers int) bool {
	return s.independent || len(s.callers) >= minCallers
}

func (s *streak) reset() {
	s.counted, s.independent = 0, false
	clear(s.callers)
	s.callers = s.callers[:0]
}

// callerRecords remembers the callers whose latest requests failed: per caller its consecutive
// failures and, once they reach the breaker's threshold, when its own circuit opened. Only a
// failing caller has a record (its next success forgets it), so a caller whose calls succeed
// costs a map lookup on an empty or small map; at most max callers are remembered, the least
// recently failed forgotten first. The breaker's lock guards it.
type callerRecords struct {
	max     int
	byKey   map[string]*list.Element // of *callerRecord
	order   *list.List               // most recently failed first
	onEvent func(event string)       // the CallerX events; must not block
}

type callerRecord struct {
	key      string
	failures int
	// openedAt is when the caller's circuit opened, or when its trial began: its requests are
	// refused for a cooldown from then. Zero while the circuit has not opened.
	openedAt time.Time
	trial    bool // a trial after the cooldown was let through; its outcome has not come
}

func newCallerRecords(max int, onEvent func(string)) callerRecords {
	return callerRecords{max: max, byKey: map[string]*list.Element{}, order: list.New(), onEvent: onEvent}
}

// refuses reports whether key's own circuit refuses a request at now: open, within its
// cooldown; it counts the refusal. trial reports that the request is to be the caller's trial
// (the cooldown has passed): the caller marks it with beginTrial once the request is let through.
func (c *callerRecords) refuses(key string, now time.Time, cooldown time.Duration) (refused, trial bool) {
	if len(c.byKey) == 0 || key == chargeNone {
		return false, false
	}
	e, ok := c.byKey[key]
	if !ok {
		return false, false
	}
	r := e.Value.(*callerRecord)
	if r.openedAt.IsZero() {
		return false, false
	}
	if now.Sub(r.openedAt) >= cooldown {
		return false, true
	}
	c.onEvent(CallerRefused)
	return true, false
}

// beginTrial marks key's request just let through as its trial. Like the shared circuit's, the
// trial is one request: the caller's others are refused for a cooldown from its start, so a
// caller whose requests hang the backend sends one per cooldown, however many it has in
// flight. Its success forgets the record (forget), its failure re-opens the circuit (failed);
// a trial whose outcome does not count (cancelled) or never comes leaves the next one to a
// cooldown later.
func (c *callerRecords) beginTrial(key string, now time.Time) {
	if e, ok := c.byKey[key]; ok {
		r := e.Value.(*callerRecord)
		r.openedAt, r.trial = now, true
	}
}

// failed counts one failure of key's; at threshold its circuit opens, and a failure of its
// trial, or after its cooldown, opens it again.
func (c *callerRecords) failed(key string, now time.Time, threshold int, cooldown time.Duration) {
	var r *callerRecord
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		r = e.Value.(*callerRecord)
	} else {
		r = &callerRecord{key: key}
		c.byKey[key] = c.order.PushFront(r)
		for c.order.Len() > c.max {
			old := c.order.Remove(c.order.Back()).(*callerRecord)
			delete(c.byKey, old.key)
			c.onEvent(CallerEvicted)
		}
	}
	r.failures++
	if r.failures >= threshold && (r.openedAt.IsZero() || r.trial || now.Sub(r.openedAt) >= cooldown) {
		r.openedAt, r.trial = now, false
		c.onEvent(CallerOpened)
	}
}

// forget drops key's record: its request succeeded.
func (c *callerRecords) forget(key string) {
	if len(c.byKey) == 0 {
		return
	}
	if e, ok := c.byKey[key]; ok {
		c.order.Remove(e)
		delete(c.byKey, key)
	}
}
