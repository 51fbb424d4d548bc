package bodyread

import "sync"

// Shares are callers' shares of one budget, by caller key: each caller's bodies are read within
// a share (NewShare) of at most the same bytes. A caller's entry lives while it holds its share
// (Take, then Give when done), so a Shares holds at most the callers in flight. The nil *Shares,
// of an unbounded budget, hands out the nil *Budget.
type Shares struct {
	parent  *Budget
	max     int64 // one caller's share
	keyless Keyless
	mu      sync.Mutex
	held    map[string]*heldShare
	// spare holds entries whose caller gave its share back whole, for the next caller to take
	// without an allocation (a share is taken for every call), at most maxSpareShares of them.
	spare []*heldShare
}

// maxSpareShares bounds Shares.spare: room for the callers that come and go at once, a few
// kilobytes held.
const maxSpareShares = 64

// Keyless is what a Shares gives the callers whose key it is not told (the key "").
type Keyless int

const (
	// KeylessInParent reads their bodies within the parent budget alone: they have no share.
	KeylessInParent Keyless = iota
	// KeylessShareOne gives them one share between them, as if they were one caller: what they
	// hold together stays within one caller's bound.
	KeylessShareOne
)

// heldShare is one caller's share and the times it is held.
type heldShare struct {
	budget Budget
	n      int
}

// NewShares returns the callers' shares of parent, max bytes each; nil when parent is nil. The
// callers without a key read within parent alone (KeylessInParent).
func NewShares(parent *Budget, max int64) *Shares {
	return NewSharesKeyless(parent, max, KeylessInParent)
}

// NewSharesKeyless is NewShares with the callers without a key treated as keyless says.
func NewSharesKeyless(parent *Budget, max int64, keyless Keyless) *Shares {
	if parent == nil {
		return nil
	}
	return &Shares{parent: parent, max: max, keyless: keyless, held: map[string]*heldShare{}}
}

// Take returns key's share, held once more; Give gives it back once. The key "" is a caller
// like any other under KeylessShareOne; under KeylessInParent it has no share, and Take returns
// the parent budget.
func (s *Shares) Take(key string) *Budget {
	if s == nil {
		return nil
	}
	if s.inParent(key) {
		return s.parent
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[key]
	if h == nil {
		if n := len(s.spare); n > 0 {
			h, s.spare = s.spare[n-1], s.spare[:n-1]
		} else {
			h = &heldShare{budget: Budget{max: s.max, parent: s.parent}}
		}
		s.held[key] = h
	}
	h.n++
	return &h.budget
}

func (s *Shares) Give(key string) {
	if s == nil || s.inParent(key) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.give(key)
}

// Return gives back n bytes taken from key's share, then the share itself once (Give): for a
// holder that keeps no *Budget between taking its bytes and returning them. Under
// KeylessInParent the key "" returns them to the parent budget.
func (s *Shares) Return(key string, n int64) {
	if s == nil {
		return
	}
	if s.inParent(key) {
		s.parent.Return(n)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[key]; h != nil {
		h.budget.Return(n)
	}
	s.give(key)
}

// give is Give with s.mu held.
func (s *Shares) give(key string) {
	if h := s.held[key]; h != nil {
		if h.n--; h.n <= 0 {
			delete(s.held, key)
			// Only a share given back whole serves another caller: one whose bytes are still
			// out (a holder that gave its share before returning them) stays that holder's.
			if h.budget.InUse() == 0 && len(s.spare) < maxSpareShares {
				h.n = 0
				s.spare = append(s.spare, h)
			}
		}
	}
}

// inParent reports whether key reads within the parent alone, with no share.
func (s *Shares) inParent(key string) bool { return key == "" && s.keyless == KeylessInParent }

// Max is one caller's share; 0 for the nil *Shares.
func (s *Shares) Max() int64 {
	if s == nil {
		return 0
	}
	return s.max
}

// Held is the number of callers holding their share now.
func (s *Shares) Held() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// InUse is what key's share holds now; 0 when key holds no share (none taken, all given back,
// or the key "" under KeylessInParent) and for the nil *Shares.
func (s *Shares) InUse(key string) int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[key]; h != nil {
		return h.budget.InUse()
	}
	return 0
}
