package mcphttp

import (
	"strconv"
	"strings"
	"testing"
)

// TestTraceListGrammars: tracestate and baggage follow their W3C grammars or are dropped whole,
// from a header or _meta alike.
func TestTraceListGrammars(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"congo=t61rcWkgMzE", true},
		{"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", true},
		{"rojo=1 , ,congo=2", true}, // empty members and OWS are allowed
		{"tenant@vendor=x", true},
		{"a*/_-=v", true},
		{"Rojo=1", false},        // upper case key
		{"1a=1", false},          // a simple key starts with a letter
		{"rojo", false},          // no value
		{"rojo=", false},         // an empty value
		{"rojo=a=b", false},      // '=' in a value
		{"rojo=a\"b", true},      // '"' is a tracestate chr
		{"rojo=1,rojo=2", false}, // a key twice
		{"t@Vendor=1", false},    // a system id starts lower case
		{"k=" + strings.Repeat("v", 256), true},
		{"k=" + strings.Repeat("v", 257), false},
		{"k=a b", true},   // an inner blank is a tracestate chr
		{"k=a\tb", false}, // a tab is not
	} {
		if got := validTraceState(tt.s); got != tt.want {
			t.Errorf("validTraceState(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
	members := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("k" + strconv.Itoa(i) + "=v")
		}
		return b.String()
	}
	if !validTraceState(members(32)) || validTraceState(members(33)) {
		t.Error("tracestate is not bounded at 32 members")
	}
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"userId=alice", true},
		{"userId=alice,serverNode=DF%2028,isProduction=false", true},
		{"key1 = value1 ; property1 ; propertyKey=propertyValue, key2=v2", true},
		{"k=", true}, // an empty value
		{"k=%E2%82%AC", true},
		{"", false},
		{"k=a b", false},      // a blank inside a value
		{`k="quoted"`, false}, // '"'
		{`k=a\b`, false},      // '\'
		{"k=é", false},        // not ASCII
		{"=v", false},         // no key
		{"k v=1", false},      // a key is a token
		{"k=v,,j=w", false},   // an empty member
		{"k", false},          // a member needs a value; only a property may be a key alone
		{"k=v;", false},       // an empty property
		{members(180), true},
		{members(181), false},
	} {
		if got := validBaggage(tt.s); got != tt.want {
			t.Errorf("validBaggage(%.40q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
