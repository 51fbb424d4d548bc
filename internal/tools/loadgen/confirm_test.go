package loadgen

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// mrtrFake is a fake MRTR server (docs/protocol.md §3) that checks every rule of the client's retry.
type mrtrFake struct {
	t       *testing.T
	mu      sync.Mutex
	firstID string
	args    string
	retries int
}

// state holds escapes on purpose: the client must echo the raw string byte for byte.
const fakeState = `"st\u00e9/\"q\"=="`

func (f *mrtrFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, err := jsonrpc.Decode(body, jsonrpc.Limits{})
	if err != nil {
		f.t.Errorf("invalid request: %v", err)
		return
	}
	p, _ := jsonrpc.ParseParams(req.Params)
	meta, _ := jsonrpc.ParseMeta(p.Meta)
	if member(meta.ClientCapabilities, "elicitation") == nil {
		f.t.Errorf("confirm request does not declare elicitation: %s", meta.ClientCapabilities)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !p.HasState {
		f.firstID, f.args = string(req.ID), string(p.Arguments)
		w.Write(jsonrpc.AppendResult(nil, req.ID, []byte(`{"resultType":"input_required","inputRequests":{`+
			`"a":{"method":"elicitation/create","params":{"mode":"form","message":"ok?","requestedSchema":{"type":"object"}}},`+
			`"b k":{"method":"elicitation/create","params":{"mode":"form","message":"sure?","requestedSchema":{"type":"object"}}}},`+
			`"requestState":`+fakeState+`}`)))
		return
	}
	f.retries++
	switch {
	case string(req.ID) == f.firstID:
		f.t.Errorf("retry reused id %s", req.ID)
	case p.Name != "gated" || string(p.Arguments) != f.args:
		f.t.Errorf("retry changed params: name %q arguments %s, want gated %s", p.Name, p.Arguments, f.args)
	case !bytes.Equal(member(req.Params, "requestState"), []byte(fakeState)):
		f.t.Errorf("requestState %s, want %s echoed exactly", member(req.Params, "requestState"), fakeState)
	}
	for _, k := range []string{"a", "b k"} {
		ans := member(p.InputResponses, k)
		if string(member(ans, "action")) != `"accept"` || string(member(ans, "content")) != `{"approve":true}` {
			f.t.Errorf("inputResponses[%q] = %s", k, ans)
		}
	}
	w.Write(jsonrpc.AppendResult(nil, req.ID, []byte(`{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)))
}

func TestConfirmFlow(t *testing.T) {
	fake := &mrtrFake{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	rep := runLoad(t, Config{URL: srv.URL + "/mcp", Requests: 3, Mix: Mix{{OpConfirm, 1}},
		ConfirmTool: "gated", ConfirmArgs: []byte(`{"x":[1,2]}`)})
	c := rep.Ops["confirm"]
	if c == nil || c.Operations != 3 || c.Errors != 0 || c.HTTPRequests != 6 {
		t.Fatalf("confirm report %+v, want 3 operations, 6 HTTP requests, no errors", c)
	}
	if fake.retries != 3 {
		t.Fatalf("fake saw %d retries, want 3", fake.retries)
	}
}
