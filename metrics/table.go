package metrics

import "sync/atomic"

// box holds a resolved child (a prometheus.Counter or Observer) so that it
// can sit behind an atomic.Pointer.
type box[T any] struct{ v T }

// table resolves the children of one metric vector over the cross product of
// closed label sets. A child is created on first use, not up front: creating
// every combination would export thousands of zero series, while resolving
// through the vector on every call would hash and allocate on the hot path.
// After the first use a lookup is an index computation and one atomic load.
type table[T any] struct {
	sets  []closedSet
	with  func(lvs ...string) T
	slots []atomic.Pointer[box[T]]
}

func newTable[T any](with func(lvs ...string) T, sets ...closedSet) *table[T] {
	n := 1
	for _, s := range sets {
		n *= s.size()
	}
	return &table[T]{sets: sets, with: with, slots: make([]atomic.Pointer[box[T]], n)}
}

// at returns the child at the flat index idx, resolving it on first use.
func (t *table[T]) at(idx int) T {
	if b := t.slots[idx].Load(); b != nil {
		return b.v
	}
	return t.resolve(idx)
}

// resolve creates the child for idx. Two goroutines may race here; the vector
// returns the same child to both, so either stored box is correct.
func (t *table[T]) resolve(idx int) T {
	lvs := make([]string, len(t.sets))
	rest := idx
	for i := len(t.sets) - 1; i >= 0; i-- {
		n := t.sets[i].size()
		lvs[i] = t.sets[i].values[rest%n]
		rest /= n
	}
	b := &box[T]{v: t.with(lvs...)}
	t.slots[idx].Store(b)
	return b.v
}

// at1 returns the child for a one-label vector.
func (t *table[T]) at1(i int) T { return t.at(i) }

// at2 returns the child for a two-label vector.
func (t *table[T]) at2(i, j int) T { return t.at(i*t.sets[1].size() + j) }

// at3 returns the child for a three-label vector.
func (t *table[T]) at3(i, j, k int) T {
	return t.at((i*t.sets[1].size()+j)*t.sets[2].size() + k)
}
