package mcphttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

const (
	tpA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tpB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

func TestValidTraceParent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"version 00", tpA, true},
		{"unsampled", tpB, true},
		{"future version with an extra field", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-abc", true},
		{"future version, same length", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09", true},
		{"version 00 with an extra field", tpA + "-abc", false},
		{"future version, junk after", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01abc", false},
		{"version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"uppercase hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"zero parent id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"short", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", false},
		{"wrong separator", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"non-hex flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := validTraceParent(tt.in); got != tt.ok {
				t.Errorf("validTraceParent(%q) = %v, want %v", tt.in, got, tt.ok)
			}
			if id := traceID(tt.in); (id != "") != tt.ok || (tt.ok && id != tt.in[3:35]) {
				t.Errorf("traceID(%q) = %q", tt.in, id)
			}
		})
	}
}

func TestTraceHeaders(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name string
		h    http.Header
		meta *jsonrpc.Meta
		want http.Header
	}{
		{"nothing", hdr(), &jsonrpc.Meta{}, nil},
		{"nil meta", hdr(), nil, nil},
		{"headers only", hdr("Traceparent", tpA, "Tracestate", "k=v", "Baggage", "u=1"), &jsonrpc.Meta{},
			hdr("Traceparent", tpA, "Tracestate", "k=v", "Baggage", "u=1")},
		{"_meta only", hdr(), &jsonrpc.Meta{TraceParent: tpB, TraceState: "m=1", Baggage: "b=2"},
			hdr("Traceparent", tpB, "Tracestate", "m=1", "Baggage", "b=2")},
		{"header wins, tracestate follows its traceparent", hdr("Traceparent", tpA),
			&jsonrpc.Meta{TraceParent: tpB, TraceState: "m=1"}, hdr("Traceparent", tpA)},
		{"baggage chosen on its own", hdr("Traceparent", tpA), &jsonrpc.Meta{Baggage: "b=2"},
			hdr("Traceparent", tpA, "Baggage", "b=2")},
		{"repeated list headers are joined", hdr("Traceparent", tpA, "Tracestate", "a=1", "Tracestate", "b=2"), nil,
			hdr("Traceparent", tpA, "Tracestate", "a=1,b=2")},
		{"invalid header traceparent drops the trace, not falling back", hdr("Traceparent", strings.ToUpper(tpA), "Tracestate", "a=1"),
			&jsonrpc.Meta{TraceParent: tpB}, nil},
		{"two traceparent headers are invalid", hdr("Traceparent", tpA, "Traceparent", tpB), nil, nil},
		{"invalid _meta traceparent is dropped with its tracestate", hdr(),
			&jsonrpc.Meta{TraceParent: "00-xyz", TraceState: "a=1", Baggage: "b=2"}, hdr("Baggage", "b=2")},
		{"tracestate without traceparent is dropped", hdr("Tracestate", "a=1"), nil, nil},
		{"control characters in _meta never become headers", hdr(),
			&jsonrpc.Meta{TraceParent: tpA, TraceState: "a=1\r\nX-Evil: 1", Baggage: "b=\n"}, hdr("Traceparent", tpA)},
		{"oversized baggage is dropped", hdr(), &jsonrpc.Meta{Baggage: strings.Repeat("k=v,", 3000)}, nil},
		{"free text is not baggage", hdr("Traceparent", tpA, "Baggage", `note=my password is "hunter2"`), nil,
			hdr("Traceparent", tpA)},
		{"free text in _meta is not baggage either", hdr(), &jsonrpc.Meta{Baggage: "a secret, in words"}, nil},
		{"a tracestate off its grammar is dropped, the traceparent kept", hdr("Traceparent", tpA, "Tracestate", "Vendor=x y;z"), nil,
			hdr("Traceparent", tpA)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := traceHeaders(tt.h, tt.meta); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("traceHeaders = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInjectTraceMeta(t *testing.T) {
	tests := []struct {
		name       string
		params     string
		tp, ts, bg string
		want       string
	}{
		{"nothing to add", `{"name":"x"}`, "", "", "", `{"name":"x"}`},
		{"no _meta", `{"name":"x"}`, tpA, "", "", `{"name":"x","_meta":{"traceparent":"` + tpA + `"}}`},
		{"empty params", `{}`, tpA, "", "", `{"_meta":{"traceparent":"` + tpA + `"}}`},
		{"nil params", ``, tpA, "", "", `{"_meta":{"traceparent":"` + tpA + `"}}`},
		{"appended to _meta", `{"_meta":{"a":1},"name":"x"}`, tpA, "s=1", "b=2",
			`{"_meta":{"a":1,"traceparent":"` + tpA + `","tracestate":"s=1","baggage":"b=2"},"name":"x"}`},
		{"empty _meta", `{"_meta":{}}`, tpA, "", "", `{"_meta":{"traceparent":"` + tpA + `"}}`},
		{"already there", `{"_meta":{"traceparent":"` + tpA + `"}}`, tpA, "", "", `{"_meta":{"traceparent":"` + tpA + `"}}`},
		{"stale value replaced in place", `{"_meta":{"traceparent":"old","x":2}}`, tpA, "", "",
			`{"_meta":{"traceparent":"` + tpA + `","x":2}}`},
		{"only the stale value is rewritten", `{"_meta":{"baggage":"b\u003d2","traceparent":"old"}}`, tpA, "", "b=2",
			`{"_meta":{"baggage":"b\u003d2","traceparent":"` + tpA + `"}}`},
		{"escaped key keeps its bytes", `{"_meta":{"trace\u0070arent":"old"}}`, tpA, "", "",
			`{"_meta":{"trace\u0070arent":"` + tpA + `"}}`},
		{"white space kept", "{ \"_meta\" : { \"a\" : 1 } ,\n \"b\" : [ 1 ] }", tpA, "", "",
			"{ \"_meta\" : { \"a\" : 1 ,\"traceparent\":\"" + tpA + "\"} ,\n \"b\" : [ 1 ] }"},
		{"nested _meta untouched", `{"arguments":{"_meta":{}}}`, "", "", "b=2",
			`{"arguments":{"_meta":{}},"_meta":{"baggage":"b=2"}}`},
		{"quotes escaped", `{}`, "", "", `x="y"`, `{"_meta":{"baggage":"x=\"y\""}}`},
		// A member the gateway does not forward is not left in _meta either: the backend sees
		// the trace context the headers carry, nothing else.
		{"nothing given removes every trace member", `{"_meta":{"traceparent":"00-xyz","tracestate":"a=1","baggage":"free text","k":1}}`,
			"", "", "", `{"_meta":{"k":1}}`},
		{"removed first member takes its comma", `{"_meta":{"baggage":"x y","k":1,"l":2}}`, "", "", "",
			`{"_meta":{"k":1,"l":2}}`},
		{"removed middle member", `{"_meta":{ "k" : 1 , "tracestate" : "S" , "l" : 2 }}`, tpA, "", "",
			`{"_meta":{ "k" : 1 , "l" : 2 ,"traceparent":"` + tpA + `"}}`},
		{"removed last member", "{\"_meta\":{\"k\":1,\n \"baggage\":\"b=\\\"q\\\"\"\n}}", "", "", "", "{\"_meta\":{\"k\":1\n}}"},
		{"escaped key removed", `{"_meta":{"trace\u0070arent":"00-xyz"},"name":"x"}`, "", "", "", `{"_meta":{},"name":"x"}`},
		{"all removed, others added", `{"_meta":{"baggage":"x y"}}`, tpA, "", "",
			`{"_meta":{"traceparent":"` + tpA + `"}}`},
		{"stale replaced, stray removed", `{"_meta":{"traceparent":"00-xyz","tracestate":"s=1","baggage":"b=1"}}`, tpA, "", "b=1",
			`{"_meta":{"traceparent":"` + tpA + `","baggage":"b=1"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var params json.RawMessage
			if tt.params != "" {
				params = json.RawMessage(tt.params)
			}
			got, err := injectTraceMeta(params, tt.tp, tt.ts, tt.bg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("injectTraceMeta =\n%s\nwant\n%s", got, tt.want)
			}
			if tt.params == tt.want && len(got) > 0 && &got[0] != &params[0] {
				t.Error("an unchanged params was copied")
			}
		})
	}
	if _, err := injectTraceMeta(json.RawMessage(`{"_meta":null}`), tpA, "", ""); !errors.Is(err, errMetaNotObject) {
		t.Errorf("_meta null: err = %v, want errMetaNotObject", err)
	}
}

// TestTraceNoAllocWhenUnchanged: the common cases (no trace context, or _meta already carrying
// it) cost no allocation on the request path.
func TestTraceNoAllocWhenUnchanged(t *testing.T) {
	params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"` + tpA + `","baggage":"b=2"},"name":"echo","arguments":{"text":"hi"}}`)
	bare := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"hi"}}`)
	empty := http.Header{"Content-Type": {"application/json"}}
	meta := &jsonrpc.Meta{}
	tests := []struct {
		name string
		fn   func()
	}{
		{"inject, already present", func() { _, _ = injectTraceMeta(params, tpA, "", "b=2") }},
		{"inject, nothing given nor there", func() { _, _ = injectTraceMeta(bare, "", "", "") }},
		{"headers, no trace", func() { _ = traceHeaders(empty, meta) }},
		// Reading a tracestate and a baggage against their grammars walks them in place.
		{"grammars", func() {
			_ = validTraceState("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,t@v=1")
			_ = validBaggage("userId=alice;p;q=1, serverNode=DF%2028")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.fn); n != 0 {
				t.Errorf("%v allocations, want 0", n)
			}
		})
	}
}

func FuzzInjectTraceMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"x"}`, `{"_meta":{}}`, `{"_meta":{"traceparent":"old","a":[1,{"b":2}]},"x":"y"}`,
		`{"_meta":{"trace\u0070arent":"` + tpA + `"}}`, "{ \"_meta\" : { } }", `{"_meta":"str"}`, `{"a":{"_meta":{}}}`} {
		f.Add([]byte(s), tpA, "k=v", "b=\"q\"")
		f.Add([]byte(s), "", "", "")
	}
	f.Fuzz(func(t *testing.T, params []byte, tp, ts, bg string) {
		if jsonrpc.Scan(params, jsonrpc.Limits{}) != nil || !isObject(params) {
			return
		}
		out, err := injectTraceMeta(params, tp, ts, bg)
		if err != nil {
			if !errors.Is(err, errMetaNotObject) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if err := jsonrpc.Scan(out, jsonrpc.Limits{}); err != nil {
			t.Fatalf("output %s is not strict JSON: %v", out, err)
		}
		again, err := injectTraceMeta(out, tp, ts, bg)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent:\n%s\n%s (%v)", out, again, err)
		}
		in, got := rawMembers(t, params), rawMembers(t, out)
		for k, v := range in {
			if k != "_meta" && got[k] != v {
				t.Fatalf("member %q changed: %s -> %s", k, v, got[k])
			}
		}
		set := map[string]string{metaTraceParent: tp, metaTraceState: ts, metaBaggage: bg}
		inMeta, outMeta := rawMembers(t, []byte(in["_meta"])), rawMembers(t, []byte(got["_meta"]))
		for k, v := range inMeta {
			if _, trace := set[k]; !trace && outMeta[k] != v {
				t.Fatalf("_meta member %q changed: %s -> %s", k, v, outMeta[k])
			}
		}
		stray := false
		for k := range set {
			_, there := inMeta[k]
			stray = stray || there
		}
		if tp == "" && ts == "" && bg == "" && !stray && string(out) != string(params) {
			t.Fatalf("nothing to set nor to take out changed %s into %s", params, out)
		}
		for k, v := range set {
			got, there := outMeta[k]
			if v != "" && !jsonStringEquals([]byte(got), roundTrip(v)) || v == "" && there {
				t.Fatalf("_meta.%s = %s, want %q", k, got, v)
			}
		}
	})
}

func isObject(b []byte) bool {
	s := strings.TrimLeft(string(b), " \t\r\n")
	return strings.HasPrefix(s, "{")
}

// rawMembers maps an object's decoded keys to their raw values; an absent object is empty.
func rawMembers(t *testing.T, obj []byte) map[string]string {
	t.Helper()
	m := map[string]string{}
	if len(obj) == 0 {
		return m
	}
	if err := jsonrpc.Members(obj, func(k, v []byte) error {
		m[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m
}

// roundTrip is what a string becomes once written as JSON and read back (invalid UTF-8 turns
// into U+FFFD).
func roundTrip(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

func BenchmarkInjectTraceMeta(b *testing.B) {
	params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"hi"}}`)
	with, _ := injectTraceMeta(params, tpA, "", "")
	for _, bc := range []struct {
		name   string
		params json.RawMessage
	}{{"insert", params}, {"unchanged", with}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = injectTraceMeta(bc.params, tpA, "", "")
			}
		})
	}
}
