package mcphttp

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams"
)

// requestOwn are the fields of request that belong to one JSON-RPC message, which a message of a
// batch has of its own. Every other field must be in shared, which every message carries.
var requestOwn = map[string]bool{
	"start": true, "requestID": true, "requestIDValue": true, "viaCallTool": true, "internal": true,
	"mutated": true, "endSpan": true, "in": true, "route": true, "rails": true, "waited": true,
	"out": true, "client": true, "admitted": true, "unauth": true, "bodyShare": true,
}

// TestRequestSharedCarried: a message of a batch carries every field of what its HTTP request's
// messages share (the caller, the endpoint, the era...), whatever is added there, and every field
// of request is either such a shared one or listed as the message's own: a field added to the
// request must be placed, so none is silently missing from a batch's messages.
func TestRequestSharedCarried(t *testing.T) {
	rt := reflect.TypeFor[request]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Anonymous && f.Type == reflect.TypeFor[shared]() {
			continue
		}
		if !requestOwn[f.Name] {
			t.Errorf("request.%s is neither in shared (carried to every message of the HTTP request) nor one message's own (requestOwn)", f.Name)
		}
	}

	s, _ := testServer(t, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{}, Deps{Version: "test"})
	sh := shared{s: s, ctx: context.Background(), peer: netip.MustParseAddr("2001:db8::1")}
	fillZero(t, "shared", reflect.ValueOf(&sh).Elem())
	x := &request{shared: sh, requestID: "r", client: &ClientSink{srv: s}}
	el, err := (&Incoming{x: x}).Element([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	got, want := reflect.ValueOf(&el.x.shared).Elem(), reflect.ValueOf(&sh).Elem()
	for i := range got.NumField() {
		if !reflect.DeepEqual(field(got, i).Interface(), field(want, i).Interface()) {
			t.Errorf("a batch's message lacks its HTTP request's %s", got.Type().Field(i).Name)
		}
	}
}

// field is v's i-th field (v addressable), readable and settable even when unexported.
func field(v reflect.Value, i int) reflect.Value {
	return reflect.NewAt(v.Field(i).Type(), v.Field(i).Addr().UnsafePointer()).Elem()
}

// fillZero gives every zero field of v (a settable struct, recursively) a value that is not
// zero, so that a field a copy leaves out shows. An interface it cannot make up must be set by
// the test first.
func fillZero(t *testing.T, at string, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f := field(v, i)
		name := at + "." + v.Type().Field(i).Name
		switch {
		case f.Kind() == reflect.Struct:
			fillZero(t, name, f)
		case !f.IsZero():
		case f.Kind() == reflect.String:
			f.SetString("x")
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.CanInt():
			f.SetInt(1)
		case f.Kind() == reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case f.Kind() == reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		case f.Kind() == reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("%s (%s): set it in the test", name, f.Type())
		}
	}
}
