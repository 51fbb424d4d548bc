package backend

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// TestNameFormRetriesOnlyANameRefusal: the second form of a non-ASCII Mcp-Name is sent only after
// the backend refused the first with 400/-32020 about Mcp-Name. Any other 400 (another header,
// another code, not JSON) reaches the caller whole and is not sent again, and neither is a
// plain ASCII name, which has one form only. The backends here answer fixed bodies: the refusals
// of the real SDK servers are driven end to end by TestNonASCIINamesRealClients.
func TestNameFormRetriesOnlyANameRefusal(t *testing.T) {
	const nameRefusal = `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch: Mcp-Name header value 'x' does not match body value 'y'"}}`
	for _, tt := range []struct {
		name, answer string
		wantSent     int
	}{
		{"résumé", nameRefusal, 2},
		{"plain", nameRefusal, 1},
		{"résumé", `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Method header is required"}}`, 1},
		{"résumé", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Mcp-Name unknown"}}`, 1},
		{"résumé", "Bad Request: Mcp-Name", 1},
	} {
		var mu sync.Mutex
		var sent []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			mu.Lock()
			sent = append(sent, r.Header.Get(mcpheader.Name))
			mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, tt.answer)
		}))
		env := &Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: names.New("__", false, []string{"s"}),
			Results: bodyread.NewBudget(1 << 20)}
		b, err := New(Config{Name: "s", URL: srv.URL + "/mcp", Timeout: 5 * time.Second}, env)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := b.Post(t.Context(), &Request{Method: "tools/call", Name: tt.name, Body: []byte(`{}`)})
		if err != nil {
			t.Fatalf("%q %.40s: %v", tt.name, tt.answer, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(body) != tt.answer {
			t.Errorf("%q %.40s: the caller read %q", tt.name, tt.answer, body)
		}
		if len(sent) != tt.wantSent || sent[0] != mcpheader.Encode(tt.name) {
			t.Errorf("%q %.40s: sent %q, want the specified form first and %d requests", tt.name, tt.answer, sent, tt.wantSent)
		}
		if tt.wantSent == 2 && sent[1] != tt.name {
			t.Errorf("the retry sent %q, want the raw name", sent[1])
		}
		b.Close()
		srv.Close()
	}
}

// TestRawNameControls: a name holding a control character, C1 as much as C0 and DEL, is never
// sent raw as Mcp-Name: it goes in the sentinel, which a receiver decodes rather than reads
// as bytes of some other charset.
func TestRawNameControls(t *testing.T) {
	for r := rune(0); r <= 0xa0; r++ {
		name := "echo" + string(r) + "x"
		control := r < 0x20 || r >= 0x7f && r <= 0x9f
		if rawNameOK(name) == control {
			t.Errorf("rawNameOK(%q) = %v", name, !control)
		}
	}
}
