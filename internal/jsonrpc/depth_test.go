package jsonrpc

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestDeepTextScannedWithinTheStackBound: no scan recurses deeper than MaxScanDepth, whatever its
// Limits, so a body of the largest size nested all the way down (four million levels, closed or
// not) costs a scan a bounded stack and is refused: Decode with -32600, IDOf with no id, Scan with
// a limit above the bound with ErrTooDeep. Before, IDOf (which an error response reads the id
// with, before authentication) recursed to the body's depth: 2 MiB of "[" grew the goroutine's
// stack to 512 MiB, and 4 MiB passed the runtime's 1 GB stack limit, a fatal error that ended the
// process. An id under a nesting Decode refuses and the bound allows is still recovered.
func TestDeepTextScannedWithinTheStackBound(t *testing.T) {
	const n = 4<<20 - 64
	head := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":`
	bodies := map[string]string{
		"open":   head + strings.Repeat("[", n),
		"closed": head + strings.Repeat("[", n/2) + strings.Repeat("]", n/2) + `}}`,
		"object": head + strings.Repeat(`{"":`, n/4),
	}
	for name, body := range bodies {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if id := IDOf([]byte(body)); id != nil {
			t.Errorf("%s: IDOf read the id %s of a body nested past MaxScanDepth", name, id)
		}
		_, err := Decode([]byte(body), Limits{})
		if rpc := (*Error)(nil); !errors.As(err, &rpc) || rpc.Code != CodeInvalidRequest {
			t.Errorf("%s: Decode: %v, want -32600", name, err)
		}
		var se *ScanError
		if err := Scan([]byte(body), Limits{MaxDepth: 1 << 30}); !errors.As(err, &se) || !errors.Is(err, ErrTooDeep) || se.Depth > MaxScanDepth+1 {
			t.Errorf("%s: Scan with a limit past MaxScanDepth: %v, want ErrTooDeep at depth %d", name, err, MaxScanDepth+1)
		}
		runtime.ReadMemStats(&after)
		if grown := int64(after.StackSys) - int64(before.StackSys); grown > 64<<20 {
			t.Errorf("%s: the stacks grew by %d MiB", name, grown>>20)
		}
	}
	shallow := head + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	if _, err := Decode([]byte(shallow), Limits{}); err == nil {
		t.Fatal("Decode took a body nested 100 levels deep")
	}
	if id := IDOf([]byte(shallow)); string(id) != "7" {
		t.Errorf("IDOf of a body nested 100 levels deep: %s, want 7", id)
	}
}
