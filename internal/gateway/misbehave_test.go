package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams"
)

func response(id, result string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
}

// sized is a response to id of exactly n bytes.
func sized(id string, n int) string {
	head, tail := `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`, `"}]}}`
	return head + strings.Repeat("b", n-len(head)-len(tail)) + tail
}

// statusOut answers id with a JSON-RPC error -32001 under HTTP status.
func statusOut(w http.ResponseWriter, status int, id string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32001,"message":"refused"}}`)
}

func jsonOut(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, s)
}

func sseOut(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, s)
}

// streamForever writes event again and again until the gateway goes away.
func streamForever(w http.ResponseWriter, r *http.Request, event string) {
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for r.Context().Err() == nil {
		if _, err := io.WriteString(w, event); err != nil || rc.Flush() != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMisbehavingBackends: a backend that answers with another id than the call's (of another
// type or spelling, or on an event before its own), with a result and an error at once, with an
// error object no SDK's client reads as one (null, or its code under another name), with two
// answers in one body (the first of two events is the answer, and ends the call), with a
// line that never ends, or with a result past its maxResponseBytes is refused with 502 and
// -32010, nothing of it relayed; one that sends only keep-alive comments, or progress, forever
// gets 504, or a -32011 event once progress has been relayed, within its timeout (progress
// does not extend it); an event stream framed with lone CRs, a byte-order mark and retry, id
// and event fields is read, and an event of another type than message passed over, as the
// SDKs' clients pass it over (its data an answer or no JSON at all); a result of exactly the bound is relayed, as a body and as an
// event alike; and a backend's JSON-RPC error keeps the 4xx status it came with, but for 401 and
// 407, which would tell the client its own credentials failed: those are 502, the error in-band.
// What the gateway does not read (a content type it does not know, a structuredContent that is
// not an object, an error result without content) is relayed as it is.
func TestMisbehavingBackends(t *testing.T) {
	const limit = 64 << 10
	// misbehaviours are the ways the misbehaving backend answers a tools/call, by tool name: id is
	// the call's id, ok a valid result, limit the backend's maxResponseBytes. Each writes its whole
	// answer, or streams until the gateway goes away.
	misbehaviours := map[string]func(w http.ResponseWriter, r *http.Request, id, ok string, limit int){
		// Another id than the call's: of another type, of another spelling, of another call.
		"id_string": func(w http.ResponseWriter, _ *http.Request, _, ok string, _ int) {
			jsonOut(w, `{"jsonrpc":"2.0","id":"1","result":`+ok+`}`)
		},
		"id_fraction": func(w http.ResponseWriter, _ *http.Request, _, ok string, _ int) {
			jsonOut(w, `{"jsonrpc":"2.0","id":1.0,"result":`+ok+`}`)
		},
		"id_other_event": func(w http.ResponseWriter, _ *http.Request, id, ok string, _ int) {
			sseOut(w, "data: "+response(`7`, ok)+"\n\ndata: "+response(id, ok)+"\n\n")
		},
		// Two answers to the call: in one body (a batch), or as two events (the first ends it).
		"two_answers_json": func(w http.ResponseWriter, _ *http.Request, id, ok string, _ int) {
			jsonOut(w, "["+response(id, ok)+","+response(id, ok)+"]")
		},
		"two_answers_events": func(w http.ResponseWriter, _ *http.Request, id, ok string, _ int) {
			sseOut(w, "data: "+response(id, `{"content":[{"type":"text","text":"first"}]}`)+"\n\ndata: "+response(id, ok)+"\n\n")
		},
		"result_and_error": func(w http.ResponseWriter, _ *http.Request, id, ok string, _ int) {
			jsonOut(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+ok+`,"error":{"code":1,"message":"x"}}`)
		},
		// Framing a reader must take: lone CRs, a byte-order mark, retry and id fields, comments.
		"cr_bom_retry": func(w http.ResponseWriter, _ *http.Request, id, ok string, _ int) {
			sseOut(w, "\ufeff: hi\rretry: 10\rid: 5\revent: message\rdata: "+response(id, ok)+"\r\r")
		},
		// Events of other types than message, which the SDKs' clients pass over: an answer of
		// its own, a keep-alive that is no JSON; then the message event's answer.
		"typed_events": func(w http.ResponseWriter, _ *http.Request, id, ok string, _ int) {
			sseOut(w, "event: ping\ndata: "+response(id, `{"content":[{"type":"text","text":"ping"}]}`)+
				"\n\nevent: heartbeat\ndata: keep-alive\n\nevent: message\ndata: "+response(id, ok)+"\n\n")
		},
		// An error no SDK's client reads as one: null, or its code under another name.
		"null_error": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			jsonOut(w, `{"jsonrpc":"2.0","id":`+id+`,"error":null}`)
		},
		"error_code_cased": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			jsonOut(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"Code":-32601,"message":"x"}}`)
		},
		// Nothing but keep-alive comments, or progress, until the gateway gives up.
		"comments_forever": func(w http.ResponseWriter, r *http.Request, _, _ string, _ int) {
			streamForever(w, r, ": keep-alive\n\n")
		},
		"progress_forever": func(w http.ResponseWriter, r *http.Request, _, _ string, _ int) {
			streamForever(w, r, progressEvent)
		},
		// A result of exactly the backend's bound, as a body and as an event, and one byte more.
		"at_bound_json": func(w http.ResponseWriter, _ *http.Request, id, _ string, limit int) {
			jsonOut(w, sized(id, limit))
		},
		"at_bound_event": func(w http.ResponseWriter, _ *http.Request, id, _ string, limit int) {
			sseOut(w, "data: "+sized(id, limit)+"\n\n")
		},
		"over_bound_json": func(w http.ResponseWriter, _ *http.Request, id, _ string, limit int) {
			jsonOut(w, sized(id, limit+1))
		},
		"over_bound_event": func(w http.ResponseWriter, _ *http.Request, id, _ string, limit int) {
			sseOut(w, "data: "+sized(id, limit+1)+"\n\n")
		},
		// A JSON-RPC error under a status of the backend's choosing: one refusing the
		// credentials the gateway sent it (its own, or a proxy's), and a plain 400.
		"refuses_gateway": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1:1/elsewhere"`)
			statusOut(w, http.StatusUnauthorized, id)
		},
		"refuses_proxy": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			statusOut(w, http.StatusProxyAuthRequired, id)
		},
		"bad_request": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			statusOut(w, http.StatusBadRequest, id)
		},
		// What the gateway does not read, relayed as it is: a content type it does not know,
		// a structuredContent that is not an object (any JSON in 2026-07-28), an error result
		// without content.
		"unknown_shapes": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			jsonOut(w, response(id, `{"content":[{"type":"hologram","depth":3}],"structuredContent":[1,"two"]}`))
		},
		"bare_error": func(w http.ResponseWriter, _ *http.Request, id, _ string, _ int) {
			jsonOut(w, response(id, `{"isError":true}`))
		},
		// One line of four times the bound, never ended.
		"endless_line": func(w http.ResponseWriter, _ *http.Request, _, _ string, limit int) {
			sseOut(w, "data: "+strings.Repeat("a", 4*limit))
		},
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name string }
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		ok := `{"content":[{"type":"text","text":"ok"}]}`
		switch f := misbehaviours[q.Params.Name]; {
		case q.Method == "tools/list":
			var tools []string
			for name := range misbehaviours {
				tools = append(tools, `{"name":"`+name+`","inputSchema":{"type":"object"}}`)
			}
			jsonOut(w, response(string(q.ID), `{"tools":[`+strings.Join(tools, ",")+`],"ttlMs":60000}`))
		case q.Method == "tools/call" && f != nil:
			f(w, r, string(q.ID), ok, limit)
		default:
			jsonOut(w, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
		}
	}))
	t.Cleanup(bad.Close)
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{
			Name: "bad", URL: bad.URL + "/mcp", Timeout: 200 * time.Millisecond, MaxResponseBytes: limit}})
	})
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	invalid, timeout := is(502, false, -32010), is(504, false, -32011)
	for tool, want := range map[string]func(outcome) bool{
		"id_string": invalid, "id_fraction": invalid, "id_other_event": invalid, "result_and_error": invalid,
		"two_answers_json": invalid, "two_answers_events": is(200, false, 0),
		"typed_events": is(200, false, 0), "null_error": invalid, "error_code_cased": invalid,
		"cr_bom_retry": is(200, false, 0), "comments_forever": timeout, "progress_forever": is(200, true, -32011),
		"at_bound_json": is(200, false, 0), "at_bound_event": is(200, false, 0),
		"over_bound_json": invalid, "over_bound_event": invalid, "endless_line": invalid,
		"refuses_gateway": is(502, false, -32001), "refuses_proxy": is(502, false, -32001), "bad_request": is(400, false, -32001),
	} {
		o, err := faultCall(client, "http://"+gw.MCP+"/mcp", "bad__"+tool, "x")
		if err != nil || !want(o) {
			t.Errorf("%s: %+v %v", tool, o, err)
		}
		if want := map[string]string{"cr_bom_retry": "ok", "at_bound_json": "b", "at_bound_event": "b", "two_answers_events": "first", "typed_events": "ok"}[tool]; o.code == 0 &&
			!strings.HasPrefix(o.text, want) {
			t.Errorf("%s: relayed %.40q, want the backend's result", tool, o.text)
		}
	}
	for tool, want := range map[string]string{
		"unknown_shapes": `{"content":[{"type":"hologram","depth":3}],"structuredContent":[1,"two"],"resultType":"complete",`,
		"bare_error":     `{"isError":true,"resultType":"complete",`,
	} {
		status, _, body := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("tools/call", "bad__"+tool),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
				`"io.modelcontextprotocol/clientCapabilities":{}},"name":"bad__`+tool+`","arguments":{}}}`)
		if status != http.StatusOK || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":1,"result":`+want) {
			t.Errorf("%s: %d %s: want the backend's result relayed as it is, with resultType and the gateway's _meta", tool, status, body)
		}
	}
}

// TestBackendInstructionsBounded: a backend whose server instructions are longer than
// upstreams.MaxInstructionsBytes has them left out of every client's server/discover, which
// would otherwise carry (and build anew, for each client) its megabytes; another backend's
// instructions, and both backends' capabilities, are served as before.
func TestBackendInstructionsBounded(t *testing.T) {
	discovering := func(instructions string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var q struct {
				ID     json.RawMessage
				Method string
			}
			if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q); err != nil {
				http.Error(w, "not JSON", http.StatusBadRequest)
				return
			}
			if q.Method != "server/discover" {
				jsonOut(w, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
				return
			}
			jsonOut(w, response(string(q.ID), `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":`+
				strconv.Quote(instructions)+`,"ttlMs":60000}`))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	wordy := discovering(strings.Repeat("w", upstreams.MaxInstructionsBytes+1))
	terse := discovering("Use terse for short answers.")
	gw := startTestGateway(t, func(c *Config) {
		for name, srv := range map[string]*httptest.Server{"wordy": wordy, "terse": terse} {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: name, URL: srv.URL + "/mcp", Timeout: 5 * time.Second}})
		}
	})
	status, _, body := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("server/discover", ""),
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`)
	var res struct {
		Result struct {
			Instructions string
			Capabilities struct{ Tools json.RawMessage }
		}
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || status != http.StatusOK {
		t.Fatalf("discover: %d %.300s", status, body)
	}
	if res.Result.Instructions != "terse: Use terse for short answers." || res.Result.Capabilities.Tools == nil {
		t.Errorf("discover served instructions of %d bytes (%.60q) and tools %s: want terse's alone, and the tools capability",
			len(res.Result.Instructions), res.Result.Instructions, res.Result.Capabilities.Tools)
	}
}
