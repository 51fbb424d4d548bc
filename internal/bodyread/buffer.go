package bodyread

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"
)

// ErrBudget is returned when growing a body's buffer would take the bytes held by every body
// read against the same Budget past its bound.
var ErrBudget = errors.New("too many body bytes in flight")

// ErrShare is the ErrBudget of a share (NewShare): the bytes of the bodies read against one
// share, not those of every body, would pass their bound.
var ErrShare = fmt.Errorf("%w: this share of the budget is spent", ErrBudget)

// Budget bounds the memory that bodies read through it hold at once, across goroutines. A body
// is charged for the capacity of its buffer as the buffer grows, that is as bytes actually
// arrive, and gives it back when released: a body that is announced as large but trickles in
// costs what has arrived, not what it declared. The nil *Budget bounds nothing.
type Budget struct {
	max  int64
	used atomic.Int64
	// parent, for a share, is the budget every charge is also made to.
	parent *Budget
}

// NewShare returns a share of parent of at most max bytes: what is charged to it is charged to
// parent too, and must fit both. For the bodies of one client within those of a replica.
func NewShare(parent *Budget, max int64) *Budget {
	return &Budget{max: max, parent: parent}
}

// take charges n bytes: nil, ErrShare when a share's own bound would be passed, ErrBudget when
// its parent's would; nothing is charged on error.
func (b *Budget) take(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		if b.parent != nil {
			return ErrShare
		}
		return ErrBudget
	}
	if err := b.parent.take(n); err != nil {
		b.used.Add(-n)
		return err
	}
	return nil
}

// NewBudget returns a budget of max bytes, or nil (unbounded) when max is not positive.
func NewBudget(max int64) *Budget {
	if max <= 0 {
		return nil
	}
	return &Budget{max: max}
}

// Take charges n bytes and reports whether they fit; nothing is charged when they do not.
func (b *Budget) Take(n int64) bool { return b.take(n) == nil }

// Charge is Take that says why n bytes do not fit: ErrShare when a share's own bound would be
// passed (the bodies of one client), ErrBudget when the budget's (everyone's).
func (b *Budget) Charge(n int64) error { return b.take(n) }

// Return gives back n bytes charged by Take.
func (b *Budget) Return(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
		b.parent.Return(n)
	}
}

// InUse is the number of bytes charged now.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Max is the bound; 0 for the unbounded nil budget.
func (b *Budget) Max() int64 {
	if b == nil {
		return 0
	}
	return b.max
}

// Buffer sizes: a body starts in a MinBuffer buffer and doubles from there; buffers up to
// maxPooled are pooled by size class, larger ones are left to the garbage collector so that one
// huge body does not pin its memory in a pool.
const (
	MinBuffer = 4 << 10
	maxPooled = 1 << 20
)

// pools holds one pool per power-of-two size from MinBuffer to maxPooled.
var pools [9]sync.Pool

// class returns the pool index of a buffer of capacity n, or -1 when n is not a pooled size.
func class(n int) int {
	if n < MinBuffer || n > maxPooled || n&(n-1) != 0 {
		return -1
	}
	return bits.Len(uint(n/MinBuffer)) - 1
}

// getBuf returns an empty buffer of capacity n and the pool's holder for it (nil when n is not
// a pooled size). The holder goes back with the buffer, so that putting a buffer in a pool does
// not allocate a new pointer to it each time.
func getBuf(n int) ([]byte, *[]byte) {
	if c := class(n); c >= 0 {
		if p, ok := pools[c].Get().(*[]byte); ok {
			return (*p)[:0], p
		}
		return make([]byte, 0, n), new([]byte)
	}
	return make([]byte, 0, n), nil
}

func putBuf(b []byte, holder *[]byte) {
	if c := class(cap(b)); c >= 0 {
		if holder == nil {
			holder = new([]byte)
		}
		*holder = b[:0]
		pools[c].Put(holder)
	}
}

// Buffer is a body read into memory, charged to a Budget until Release.
type Buffer struct {
	// B holds the body.
	B       []byte
	holder  *[]byte // B's holder in its pool (getBuf)
	budget  *Budget
	charged int64
}

// Release returns the buffer's capacity to its budget and the buffer to its pool. B must not be
// used afterwards. It is safe on a nil *Buffer and safe to call twice.
func (b *Buffer) Release() {
	if b == nil || b.B == nil {
		return
	}
	b.budget.Return(b.charged)
	if b.charged > 0 {
		putBuf(b.B, b.holder) // a detached buffer may still be referenced
	}
	b.B, b.holder, b.charged = nil, nil, 0
}

// grow makes room for at least one more byte: the capacity is multiplied by factor, from
// MinBuffer, never past most, and the growth is charged first. It is called only when the buffer
// is full, so a buffer is never more than factor times the bytes that arrived (or MinBuffer).
func (b *Buffer) grow(factor, most int) error {
	n := max(factor*cap(b.B), MinBuffer)
	if n > most {
		n = most
	}
	if err := b.budget.take(int64(n)); err != nil {
		return err
	}
	nb, holder := getBuf(n)
	nb = append(nb, b.B...)
	if old := b.B; old != nil {
		b.budget.Return(int64(cap(old)))
		b.charged -= int64(cap(old))
		putBuf(old, b.holder)
	}
	b.B, b.holder, b.charged = nb, holder, b.charged+int64(n)
	return nil
}

// Read reads r to its end into a Buffer that grows as bytes arrive, charging budget for every
// growth. It returns ErrTooLarge as soon as more than limit bytes arrived, ErrBudget when the
// budget cannot hold the next growth, and any other read error as it is; on error the buffer is
// already released. The bytes a client declares (Content-Length) are never allocated up front.
func Read(r io.Reader, limit int64, budget *Budget) (*Buffer, error) {
	return ReadSized(r, limit, -1, budget)
}

// ReadSized is Read for a body that declares its size (a backend's Content-Length): the
// buffer still grows only as bytes arrive, but by fours while it is short of the declared size,
// and a growth that would pass that size plus the byte that proves its end stops there, so a
// body as long as it said ends in a buffer of exactly its size, after fewer copies. The
// declared size is only a hint and is never allocated up front: the buffer is never more than
// four times the bytes that arrived (or MinBuffer), so a peer that announces a large body and
// sends a byte costs a MinBuffer, with or without a budget. A body longer than it declared still grows,
// and is still bounded by limit.
func ReadSized(r io.Reader, limit, size int64, budget *Budget) (*Buffer, error) {
	b := &Buffer{budget: budget}
	if err := b.grow(2, MinBuffer); err != nil {
		return nil, err
	}
	max := limit + 1 // the byte that proves the body is too large
	if max > int64(^uint(0)>>1) || max <= 0 {
		max = int64(^uint(0) >> 1)
	}
	for {
		var n int
		var err error
		if len(b.B) < cap(b.B) {
			n, err = r.Read(b.B[len(b.B):cap(b.B)])
			b.B = b.B[:len(b.B)+n]
		} else {
			// Full: ask for one byte before growing, so that a body which ends exactly at a
			// buffer size (or at limit) is not copied into a larger buffer to read its EOF.
			var one [1]byte
			if n, err = r.Read(one[:]); n > 0 {
				factor, most := 2, max
				if size >= 0 && size < limit && size+1 > int64(cap(b.B)) {
					// Toward a declared end, and the byte that proves it: by fours, which
					// halves the copies and the garbage of a large body, still in step
					// with the bytes that arrived.
					factor, most = 4, size+1
				}
				if gerr := b.grow(factor, int(most)); gerr != nil {
					b.Release()
					return nil, gerr
				}
				b.B = append(b.B, one[0])
			}
		}
		if int64(len(b.B)) > limit {
			b.Release()
			return nil, ErrTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			b.Release()
			return nil, err
		}
	}
}

// Settle moves the buffer's charge from its share (NewShare) to to, where it stays until
// Release: the body is the client's no more (its caller is authenticated, and bounded as a
// caller). to is a share of the same parent (the caller's share of the replica's budget) or
// nil for the parent itself; the parent is charged once throughout, as before. It returns
// ErrShare, and moves nothing, when the body does not fit in to. Nothing for a buffer not read
// against a budget.
func (b *Buffer) Settle(to *Budget) error {
	if b == nil || b.budget == nil {
		return nil
	}
	root := b.budget
	if root.parent != nil {
		root = root.parent
	}
	if to == nil || to.parent != root {
		to = root
	}
	if to == b.budget {
		return nil
	}
	if to != root && to.used.Add(b.charged) > to.max {
		to.used.Add(-b.charged)
		return ErrShare
	}
	if b.budget != root {
		b.budget.used.Add(-b.charged)
	}
	b.budget = to
	return nil
}

// Detach returns the buffer's charge to its budget but leaves B to the garbage collector rather
// than the pool: for a body whose bytes may still be referenced after the request (a shared
// stream that keeps a slice of it). Release afterwards does nothing.
func (b *Buffer) Detach() {
	if b == nil {
		return
	}
	b.budget.Return(b.charged)
	b.charged = 0
}
