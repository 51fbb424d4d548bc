package jsonrpc

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// manyKeys is a request whose arguments are one object of short keys filling about size bytes,
// then last.
func manyKeys(size int, last string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a__b","arguments":{`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `"k%d":0,`, i)
	}
	b.WriteString(last + `}}}`)
	return b.String()
}

// TestManyKeysCostTheirSetLittle: an object of half a million short keys (a 4 MiB body) is told
// apart by a set that holds a map slot per key, not two strings: its decode allocates less than
// five times the body. Before, it allocated twelve times the body (49 MiB), most of it held until
// the object ended. A key repeated at the end, exactly, under folding or escaped, is still found.
func TestManyKeysCostTheirSetLittle(t *testing.T) {
	const size = 4 << 20
	body := []byte(manyKeys(size, `"end":0`))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Decode(body, Limits{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 5*size {
		t.Errorf("decoding %d KiB of short keys allocated %d MiB", len(body)>>10, n>>20)
	}
	for last, want := range map[string]string{`"k7":1`: "duplicate object key", `"K_7":1`: "differ only in case",
		`"\u006b7":1`: "duplicate object key", `"k7x":1`: ""} {
		_, err := Decode([]byte(manyKeys(64<<10, last)), Limits{})
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s last: %v, want %q", last, err, want)
		}
	}
}

// TestKeySetAgreesWithPairwise: past the small objects' linear comparison, the set of hashes
// finds a duplicate exactly when comparing every pair of keys does (equal, or with folding equal
// under FoldEqual), whatever the spellings (case, underscores, escapes, other scripts), and names
// the earlier spelling of the first duplicate key.
func TestKeySetAgreesWithPairwise(t *testing.T) {
	spellings := []string{`k`, `K`, `k_`, `\u006b`, `é`, `e\u0301`, `É`, `ǆ`, `Ǆ`, `ǅ`, `ß`, `ss`, `SS`, `Ｋ`, `x`, `y-z`, `yz`}
	seed := uint32(1)
	next := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>16) % n
	}
	for round := range 2000 {
		n := smallObjectKeyScanMax + 1 + next(24)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%s%d", spellings[next(len(spellings))], next(3*n))
		}
		var data strings.Builder
		offs := make([]int, n)
		data.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				data.WriteString(",")
			}
			offs[i] = data.Len()
			data.WriteString(`"` + k + `":0`)
		}
		data.WriteString("}")
		text := []byte(data.String())
		for _, fold := range []bool{false, true} {
			var set keySet
			gotAt, wantAt := -1, -1
			var gotPrev, wantPrev string
			for i := range keys {
				key := keyAt(text, offs[i])
				for j := range i {
					if p := keyAt(text, offs[j]); wantAt < 0 && (string(p) == string(key) || (fold && FoldEqual(p, key))) {
						wantAt, wantPrev = i, string(p)
					}
				}
				if _, prev, dup := set.add(text, key, offs[i], fold); dup {
					gotAt, gotPrev = i, prev
					break
				}
				if wantAt >= 0 {
					break
				}
			}
			if gotAt != wantAt || (gotAt >= 0 && FoldKey(gotPrev) != FoldKey(wantPrev)) {
				t.Fatalf("round %d fold %v %q: the set found a duplicate at %d (earlier %q), pairs at %d (earlier %q)",
					round, fold, keys, gotAt, gotPrev, wantAt, wantPrev)
			}
		}
	}
}
