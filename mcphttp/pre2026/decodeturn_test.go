package pre2026

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// gateBody is a size the decode gate makes wait (mcphttp's largeBody, 256 KiB).
const gateBody = 256 << 10

// TestLargeBatchWaitsForTheGate: a batch waits for a turn at the decode gate as a body of its
// size does at stage decode, though each of its messages is below the gate's size: while every
// turn is taken it is refused as overload (503, -32014, Retry-After) and none of its messages
// reaches the backend; a small batch is served meanwhile.
func TestLargeBatchWaitsForTheGate(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Server: mcphttp.Config{MaxBodyBytes: 4 << 20}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	holdDecodeGate(t, gw.mcp, 50*time.Millisecond)
	be.Reset()

	echo := func(id int, n int) string {
		return rpc(id, "tools/call", `{"name":"be__echo","arguments":{"text":"`+strings.Repeat("x", n)+`"}}`)
	}
	var msgs []string
	for i := range 8 {
		msgs = append(msgs, echo(i, gateBody/8+64)) // each far below the gate's size
	}
	r := do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(msgs...))
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("large batch with every turn taken: %d %v %s, want 503 with Retry-After", r.Status, r.Header, r.Body)
	} else {
		mcptest.CheckRPC(t, r, jsonrpc.CodeUnavailable)
	}
	if n := len(be.Requests()); n != 0 {
		t.Errorf("the backend got %d requests of refused batches", n)
	}
	r = do(t, "POST", gw.URL, legacyHeaders("", sid), batchOf(echo(1, 10), echo(2, 10)))
	if got := batchMessages(t, r); r.Status != http.StatusOK || len(got) != 2 || got["1"].Error != nil || got["2"].Error != nil {
		t.Errorf("small batch while the gate is full: %d %s", r.Status, r.Body)
	}
}

// holdDecodeGate takes every turn of s's decode gate until the test ends and makes a large decode
// wait at most wait for one. The gate is unexported state of mcphttp.Server (decodes, a
// decodeGate of slots and wait), reached by reflection; a change of its shape fails here.
func holdDecodeGate(t *testing.T, s *mcphttp.Server, wait time.Duration) {
	t.Helper()
	gate := reflect.ValueOf(s).Elem().FieldByName("decodes")
	if !gate.IsValid() || gate.Kind() != reflect.Pointer {
		t.Fatal("mcphttp.Server has no decode gate named decodes")
	}
	g := gate.Elem()
	slots, w := g.FieldByName("slots"), g.FieldByName("wait")
	if !slots.IsValid() || slots.Kind() != reflect.Chan || !w.IsValid() || w.Type() != reflect.TypeFor[time.Duration]() {
		t.Fatal("the decode gate has no slots channel or wait duration")
	}
	slots = reflect.NewAt(slots.Type(), slots.Addr().UnsafePointer()).Elem()
	reflect.NewAt(w.Type(), w.Addr().UnsafePointer()).Elem().Set(reflect.ValueOf(wait))
	taken := slots.Cap()
	for range taken {
		slots.Send(reflect.Zero(slots.Type().Elem()))
	}
	t.Cleanup(func() {
		for range taken {
			slots.Recv()
		}
	})
}
