package upstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// definitionsBackend is a modern backend written for the test: it decodes each JSON-RPC request
// with encoding/json, as Go backends do, pages tools/list one item at a time with a cursor
// only its own bytes name (a lone surrogate escape, which decodes to U+FFFD), does not
// implement prompts/list, and answers resources/templates/list with templatesCode when set.
type definitionsBackend struct {
	mu            sync.Mutex
	metas         map[string][]string // method → the protocol version each request's _meta named
	templatesCode int
}

const pinnedToolA = `{"name":"a","description":"A.","inputSchema":{"type":"object"},"_meta":{"vendor/x":1}}`

func (d *definitionsBackend) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor *string `json:"cursor"`
			Meta   struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	body, err := io.ReadAll(req.Body)
	if err == nil {
		err = json.Unmarshal(body, &msg)
	}
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	d.mu.Lock()
	if d.metas == nil {
		d.metas = map[string][]string{}
	}
	d.metas[msg.Method] = append(d.metas[msg.Method], msg.Params.Meta.Version)
	templatesCode := d.templatesCode
	d.mu.Unlock()
	reply := func(member, v string) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"` + member + `":` + v + `}`))
	}
	switch {
	case msg.Params.Meta.Version != ProtocolVersion:
		reply("error", `{"code":-32602,"message":"missing protocol version"}`)
	case msg.Method == MethodDiscover:
		reply("result", `{"supportedVersions":["`+ProtocolVersion+`"],"capabilities":{"tools":{},"prompts":{}},"instructions":"Be careful.","resultType":"complete"}`)
	case msg.Method == MethodToolsList && msg.Params.Cursor == nil:
		reply("result", `{"tools":[`+pinnedToolA+`],"nextCursor":"p\ud800","resultType":"complete"}`)
	case msg.Method == MethodToolsList && bytes.Contains(body, []byte(`"cursor":"p\ud800"`)):
		reply("result", `{"tools":[{"name":"b"}],"resultType":"complete"}`)
	case msg.Method == MethodToolsList:
		reply("error", `{"code":-32602,"message":"bad cursor"}`)
	case msg.Method == MethodResourceTemplates && templatesCode != 0:
		reply("error", `{"code":-32603,"message":"broken"}`)
	case msg.Method == MethodResourceTemplates:
		reply("result", `{"resourceTemplates":[{"uriTemplate":"x:///{id}","name":"x"}],"resultType":"complete"}`)
	default:
		reply("error", `{"code":-32601,"message":"Method not found"}`)
	}
}

// TestDefinitions: the backend's own items come back as sent (backend-side names, _meta kept),
// across pages (its cursor sent back in the bytes it wrote), with the protocol version in every request's _meta; an unimplemented list is
// empty; any other error fails the whole fetch.
func TestDefinitions(t *testing.T) {
	be := &definitionsBackend{}
	srv := httptest.NewServer(be)
	t.Cleanup(srv.Close)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp", Timeout: 5 * time.Second}}}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	defs, err := r.Definitions(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if defs.Instructions != "Be careful." {
		t.Errorf("instructions %q", defs.Instructions)
	}
	if len(defs.Tools) != 2 || string(defs.Tools[0]) != pinnedToolA || string(defs.Tools[1]) != `{"name":"b"}` {
		t.Errorf("tools %s", defs.Tools)
	}
	if len(defs.Prompts) != 0 {
		t.Errorf("prompts %s", defs.Prompts)
	}
	if len(defs.ResourceTemplates) != 1 || !strings.Contains(string(defs.ResourceTemplates[0]), `"x:///{id}"`) {
		t.Errorf("templates %s", defs.ResourceTemplates)
	}
	be.mu.Lock()
	if n := len(be.metas[MethodToolsList]); n != 2 {
		t.Errorf("%d tools/list requests, want 2 pages", n)
	}
	be.mu.Unlock()

	be.mu.Lock()
	be.templatesCode = -32603
	be.mu.Unlock()
	if _, err := r.Definitions(ctx, "alpha"); err == nil || !strings.Contains(err.Error(), MethodResourceTemplates) {
		t.Errorf("a failing list: %v", err)
	}
	if _, err := r.Definitions(ctx, "nosuch"); err == nil {
		t.Error("unknown upstream accepted")
	}
}
