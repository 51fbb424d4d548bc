package pre2026

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/eventstream"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyGetStream: GET with a valid session opens an SSE stream of list_changed notifications
// backed by the shared listen: no acknowledgement, no subscription id; one event with an SSE id
// of 128 random bits and no data before the notifications, which carry none (a Last-Event-ID
// sent is not refused); GET without a session is 405 as before, with a session that does not
// open 404; DELETE stays 405.
func TestLegacyGetStream(t *testing.T) {
	fan := mcptest.NewFanBackend()
	be := httptest.NewServer(fan)
	t.Cleanup(be.Close)
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "fan", URL: be.URL + "/mcp"})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)

	get := func(h http.Header) *http.Response {
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gw.URL, nil)
		req.Header = h
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = res.Body.Close() })
		return res
	}
	sse := legacyHeaders("2025-11-25", sid)
	sse.Set("Accept", "text/event-stream")
	sse.Set("Last-Event-ID", "42")
	for _, tt := range []struct {
		name   string
		method string
		header http.Header
		status int
	}{
		{"GET without a session", http.MethodGet, legacyHeaders("2025-11-25", ""), 405},
		{"GET without Accept SSE", http.MethodGet, mcptest.With(legacyHeaders("2025-11-25", sid), "Accept", "application/json"), 405},
		{"GET with a session that does not open", http.MethodGet, mcptest.With(sse, "Mcp-Session-Id", sid[:len(sid)-4]), 404},
		{"DELETE", http.MethodDelete, legacyHeaders("2025-11-25", sid), 405},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, tt.method, gw.URL, tt.header, "")
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d", r.Status, tt.status)
			}
			if tt.status == 405 && r.Header.Get("Allow") != "POST" {
				t.Fatalf("Allow %q", r.Header.Get("Allow"))
			}
		})
	}

	res := get(sse)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET: %d %v", res.StatusCode, res.Header)
	}
	events := make(chan eventstream.Event, 64)
	go func() {
		e := eventstream.NewReader(res.Body, 4<<10, 1<<20)
		for {
			ev, err := e.Next()
			if err != nil {
				break
			}
			events <- ev
		}
		close(events)
	}()
	mcptest.WaitFor(t, "the backend has a listen open", func() bool { open, _ := fan.Counts(); return open == 1 })
	fan.Notify(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"b"}}}`)
	deadline := time.After(10 * time.Second)
	primed := false
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev.HasID {
				if primed || ev.HasData || len(ev.ID) != 32 || strings.Trim(ev.ID, "0123456789abcdef") != "" {
					t.Fatalf("an SSE id %q (data %q), want one of 32 hex digits, once, with no data", ev.ID, ev.Data)
				}
				primed = true
				continue
			}
			if !primed && ev.HasData {
				t.Fatalf("an event before the one with the stream's id: %q", ev.Data)
			}
			data := string(ev.Data)
			if !ev.HasData {
				continue
			}
			var m struct {
				Method string
				Params json.RawMessage
			}
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatal(err)
			}
			if m.Method != "notifications/tools/list_changed" || strings.Contains(data, "subscriptionId") {
				t.Fatalf("got %s, want only list_changed without a subscription id", data)
			}
			return
		case <-deadline:
			t.Fatal("no list_changed on the GET stream")
		}
	}
}

// TestLegacyGetStreamEndsWithTheSession: a GET stream ends when its session expires, as a round
// waiting for the client's answers does: from then on the session is refused (404) on every
// request, its GET included, and its client initializes again. Before, the stream of a session
// opened shortly before its expiry ran on for as long as its client held it (for ever without
// authentication), relaying to a session the gateway no longer served.
func TestLegacyGetStreamEndsWithTheSession(t *testing.T) {
	fan := mcptest.NewFanBackend()
	be := httptest.NewServer(fan)
	t.Cleanup(be.Close)
	clock := mcptest.NewClock(time.Now())
	gw, e := startLegacyGateway(t, gwSpec{Edge: Config{SessionTTL: time.Hour}, Deps: mcphttp.Deps{Clock: clock.Now}},
		upstreams.UpstreamConfig{Name: "fan", URL: be.URL + "/mcp"})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	sess, err := e.sessions.Open(sid, legacysession.Anonymous)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(sess.Expires.Sub(clock.Now()) - 100*time.Millisecond)
	h := mcptest.With(legacyHeaders("2025-11-25", sid), "Accept", "text/event-stream")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, gw.URL, nil)
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", res.StatusCode)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, res.Body)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("the stream broke off instead of ending: %v", err)
		}
	case <-time.After(10 * time.Second): // fail-safe
		t.Fatal("the stream outlived its session")
	}
	mcptest.WaitFor(t, "the backend's listen closed", func() bool { open, _ := fan.Counts(); return open == 0 })
	clock.Advance(time.Second)
	if r := do(t, http.MethodGet, gw.URL, h, ""); r.Status != http.StatusNotFound {
		t.Fatalf("GET again after the expiry: %d, want 404", r.Status)
	}
}
