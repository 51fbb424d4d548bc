package bodyread

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestPoolClasses(t *testing.T) {
	if c := class(maxPooled); c != len(pools)-1 {
		t.Fatalf("class(maxPooled) = %d, want %d", c, len(pools)-1)
	}
	for _, n := range []int{0, MinBuffer - 1, MinBuffer + 1, 2 * maxPooled} {
		if class(n) != -1 {
			t.Errorf("class(%d) = %d, want not pooled", n, class(n))
		}
	}
}

// TestReadGrowsAsBytesArrive: a body is charged for what has arrived, never for what it declares
// or for the limit, and everything charged comes back on Release or on error.
func TestReadGrowsAsBytesArrive(t *testing.T) {
	const limit = 1 << 20
	budget := NewBudget(128 << 10)
	b, err := Read(iotest.OneByteReader(strings.NewReader("{}")), limit, budget)
	if err != nil {
		t.Fatal(err)
	}
	if string(b.B) != "{}" {
		t.Fatalf("body %q", b.B)
	}
	if got := budget.InUse(); got != MinBuffer {
		t.Fatalf("a 2-byte body holds %d bytes of the budget, want %d", got, MinBuffer)
	}
	b.Release()
	b.Release()
	if got := budget.InUse(); got != 0 {
		t.Fatalf("after Release %d bytes are still charged", got)
	}

	// 40 KiB fits (a 64 KiB buffer, 96 KiB while it doubles); 100 KiB more does not.
	if b, err = Read(strings.NewReader(strings.Repeat("x", 40<<10)), limit, budget); err != nil {
		t.Fatal(err)
	}
	if len(b.B) != 40<<10 || budget.InUse() != int64(cap(b.B)) {
		t.Fatalf("len %d, charged %d, cap %d", len(b.B), budget.InUse(), cap(b.B))
	}
	if _, err := Read(strings.NewReader(strings.Repeat("x", 100<<10)), limit, budget); !errors.Is(err, ErrBudget) {
		t.Fatalf("a body past the budget: %v, want ErrBudget", err)
	}
	b.Release()
	if got := budget.InUse(); got != 0 {
		t.Fatalf("%d bytes still charged", got)
	}
}

func TestReadLimits(t *testing.T) {
	const limit = 3000
	boom := errors.New("reset")
	tests := []struct {
		name string
		r    io.Reader
		want error
		size int
	}{
		{"empty", strings.NewReader(""), nil, 0},
		{"at the limit", strings.NewReader(strings.Repeat("x", limit)), nil, limit},
		{"at the limit, a byte at a time", iotest.OneByteReader(strings.NewReader(strings.Repeat("x", limit))), nil, limit},
		{"one over", strings.NewReader(strings.Repeat("x", limit+1)), ErrTooLarge, 0},
		{"far over", strings.NewReader(strings.Repeat("x", 100*limit)), ErrTooLarge, 0},
		{"error mid-way", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), boom, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			budget := NewBudget(1 << 20)
			b, err := Read(tt.r, limit, budget)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Read = %v, want %v", err, tt.want)
			}
			if err == nil {
				if len(b.B) != tt.size || cap(b.B) > limit+1 && cap(b.B) > MinBuffer {
					t.Fatalf("len %d cap %d", len(b.B), cap(b.B))
				}
				b.Release()
			}
			if budget.InUse() != 0 {
				t.Fatalf("%d bytes still charged", budget.InUse())
			}
		})
	}
}

func BenchmarkReadSmall(b *testing.B) {
	body := strings.Repeat("x", 600)
	b.ReportAllocs()
	for range b.N {
		buf, err := Read(strings.NewReader(body), 4<<20, nil)
		if err != nil {
			b.Fatal(err)
		}
		buf.Release()
	}
}

// TestReadSized: a declared length within the limit is read into one buffer of that size; a
// body longer than declared still grows and is still bounded; a declared length past the limit
// is not allocated.
func TestReadSized(t *testing.T) {
	const limit = 1 << 20
	budget := NewBudget(4 << 20)
	body := strings.Repeat("x", 300<<10)
	b, err := ReadSized(strings.NewReader(body), limit, int64(len(body)), budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.B) != len(body) || cap(b.B) != len(body)+1 || budget.InUse() != int64(len(body)+1) {
		t.Fatalf("len %d cap %d charged %d: want one buffer of the declared size", len(b.B), cap(b.B), budget.InUse())
	}
	b.Release()
	if b, err = ReadSized(strings.NewReader(body), limit, 100, budget); err != nil || len(b.B) != len(body) {
		t.Fatalf("a body longer than declared: %v", err)
	}
	b.Release()
	if _, err := ReadSized(strings.NewReader(body+body+body+body), limit, 100, budget); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a body past the limit, declared small: %v", err)
	}
	if b, err = ReadSized(strings.NewReader("{}"), limit, 1<<40, budget); err != nil || cap(b.B) != MinBuffer {
		t.Fatalf("a declared length past the limit: %v", err)
	}
	b.Release()
	if budget.InUse() != 0 {
		t.Fatalf("%d bytes still charged", budget.InUse())
	}
}

// offered is a reader of body that notes the most room a Read was ever offered: what the
// reader of it had allocated for bytes that had not arrived.
type offered struct {
	r    io.Reader
	room int
}

func (o *offered) Read(p []byte) (int, error) {
	o.room = max(o.room, len(p))
	return o.r.Read(p)
}

// TestReadSizedFollowsArrivedBytes: a declared length is a hint, never an allocation. Whatever
// a peer declares (nothing, the truth, less, more, the limit, past the limit), with the budget
// on or off, the buffer is at most twice the bytes that arrived (four times toward a declared
// size; or MinBuffer), and the room offered to a read is never more than that: a peer that announces the limit and sends a byte
// costs a MinBuffer. A truthful declaration still ends in a buffer of its size (and the byte
// that proves its end), not the next doubling.
func TestReadSizedFollowsArrivedBytes(t *testing.T) {
	const limit = 1 << 20
	for _, n := range []int{0, 1, MinBuffer - 1, MinBuffer, MinBuffer + 1, 3*MinBuffer + 5, 100 << 10, limit} {
		for _, size := range []int64{-1, 0, int64(n) - 1, int64(n), int64(n) + 1, 2 * int64(n), limit - 1, limit, 1 << 40} {
			for _, budget := range []*Budget{nil, NewBudget(8 << 20)} {
				for _, slow := range []bool{false, true} {
					if slow && n > 16<<10 {
						continue // a byte a read is for the small sizes, where the doublings are
					}
					var r io.Reader = strings.NewReader(strings.Repeat("x", n))
					if slow {
						r = iotest.OneByteReader(r)
					}
					o := &offered{r: r}
					b, err := ReadSized(o, limit, size, budget)
					if err != nil {
						t.Fatalf("n %d size %d: %v", n, size, err)
					}
					factor := 2
					if size > 0 && size < limit {
						factor = 4
					}
					bound := max(MinBuffer, factor*n)
					if len(b.B) != n || cap(b.B) > bound || o.room > bound {
						t.Errorf("n %d declared %d (budget %v, slow %v): cap %d, a read offered %d bytes, want at most %d",
							n, size, budget != nil, slow, cap(b.B), o.room, bound)
					}
					if size == int64(n) && n > MinBuffer && cap(b.B) > n+1 {
						t.Errorf("n %d declared truthfully: cap %d, want at most %d", n, cap(b.B), n+1)
					}
					if budget != nil && budget.InUse() != int64(cap(b.B)) {
						t.Errorf("n %d size %d: %d charged for a buffer of %d", n, size, budget.InUse(), cap(b.B))
					}
					b.Release()
					if budget.InUse() != 0 {
						t.Fatalf("%d bytes still charged", budget.InUse())
					}
				}
			}
		}
	}
}
