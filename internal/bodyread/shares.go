package bodyread

import "sync"

// Shares are callers' shares of one budget, by caller key: each caller's bodies are read within
// a share (NewShare) of at most the same bytes. A caller's entry lives while it holds its share
// (Take, then Give when done), so a Shares holds at most the callers in flight. The nil *Shares,
// of an unbounded budget, hands out the nil *Budget.
type Shares struct {
	parent *Budget
	max    int64 // one caller's share
	mu     sync.Mutex
	held   map[string]*heldShare
}

// heldShare is one caller's share and the times it is held.
type heldShare struct {
	budget *Budget
	n      int
}

// NewShares returns the callers' shares of parent, max bytes each; nil when parent is nil.
func NewShares(parent *Budget, max int64) *Shares {
	if parent == nil {
		return nil
	}
	return &Shares{parent: parent, max: max, held: map[string]*heldShare{}}
}

// Take returns key's share, held once more; Give gives it back once. The key "" (no caller
// known) has no share: its bodies are read within the parent budget alone.
func (s *Shares) Take(key string) *Budget {
	if s == nil {
		return nil
	}
	if key == "" {
		return s.parent
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[key]
	if h == nil {
		h = &heldShare{budget: NewShare(s.parent, s.max)}
		s.held[key] = h
	}
	h.n++
	return h.budget
}

func (s *Shares) Give(key string) {
	if s == nil || key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[key]; h != nil {
		if h.n--; h.n <= 0 {
			delete(s.held, key)
		}
	}
}

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
