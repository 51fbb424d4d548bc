package mcphttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// pinBenchTool is the one tool the benchmark backend lists, as it lists it.
const pinBenchTool = `{"name":"echo","description":"Echo the text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true}}`

// pinListBackend answers tools/list with pinBenchTool (cacheable for ten minutes) and every
// other request with mcptest.CannedResult, without a network; requests must come one at a time.
type pinListBackend struct {
	canned *mcptest.CannedBackend
	list   []byte
	rd     bytes.Reader
}

func (l *pinListBackend) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Mcp-Method") != "tools/list" {
		return l.canned.RoundTrip(r)
	}
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	l.rd.Reset(l.list)
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: jsonHeader, Body: io.NopCloser(&l.rd), ContentLength: int64(len(l.list)), Request: r}, nil
}

// pinBench builds the gateway in front of the listing backend, with pinning on (the tool
// pinned in a lock file, unchanged) or off.
func pinBench(b *testing.B, on bool) *echo.Echo {
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(b), mrtr.Config{}, replays, nil)
	if err != nil {
		b.Fatal(err)
	}
	be := &pinListBackend{canned: newCannedBackend(),
		list: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + pinBenchTool + `],"ttlMs":600000,"cacheScope":"public","resultType":"complete"}}`)}
	opts := upstreams.Options{Transport: be}
	if on {
		lock := pins.NewLock()
		if err := lock.AddItems("be", pins.KindTool, []json.RawMessage{json.RawMessage(pinBenchTool)}); err != nil {
			b.Fatal(err)
		}
		if opts.Pins, err = pins.NewGuard(pins.GuardOptions{Config: &pins.Config{LockFile: "pins.yaml"}, Lock: lock, Backends: []string{"be"}}); err != nil {
			b.Fatal(err)
		}
	}
	_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), opts, Deps{Version: "bench", MRTR: codec})
	return e
}

// BenchmarkPins is a cached tools/list and a forwarded tools/call with pinning off and on. The
// list's fingerprints are computed when the backend's list is fetched (once, then cached); a
// call looks its verdict up in the verdicts kept with the list.
func BenchmarkPins(b *testing.B) {
	list := `{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{` + meta + `}}`
	call := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	for _, mode := range []struct {
		name string
		on   bool
	}{{"off", false}, {"on", true}} {
		b.Run("cached-list/"+mode.name, func(b *testing.B) {
			e := pinBench(b, mode.on)
			benchPost(b, e, modern("tools/list", ""), list)
		})
		b.Run("tools-call/"+mode.name, func(b *testing.B) {
			e := pinBench(b, mode.on)
			benchPost(b, e, modern("tools/call", "be__echo"), call)
		})
	}
}
