package mcphttp

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/metrics"
)

// TestNotificationNotesBounded: what notifications leave for the result's annotation is bounded
// (docs/guardrails.md: a request keeps at most 32 findings from notifications), however many
// notifications a backend relays and however many findings each holds; they are still relayed
// flagged, not dropped.
func TestNotificationNotesBounded(t *testing.T) {
	engine, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Tools: []string{"*"},
		Results: guardrails.DirectionConfig{PII: "flag"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := metrics.NewGuardrails(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	g := &railer{engine: engine, rec: rec, log: slog.New(slog.DiscardHandler), now: time.Now}
	x := &request{}
	x.rails = g.state(engine.Rule(guardrails.KindTool, "be", "t"))
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` +
		strings.Repeat("a@example.org ", 20) + `"}}`)
	for range 3 {
		if out, drop := g.checkNotification(x, msg); drop || string(out) != string(msg) {
			t.Fatalf("a flagged notification was dropped or changed: %v %s", drop, out)
		}
	}
	if n := len(x.rails.notes); n != 32 {
		t.Errorf("60 flagged findings left %d notes, want 32", n)
	}
	// The annotation names 32 and counts the rest: those past the notes, and those past a
	// notification's listed findings (64 logged, then one flagged).
	logged, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Tools: []string{"*"},
		Results: guardrails.DirectionConfig{Secrets: "log", Injection: "flag"}}}})
	if err != nil {
		t.Fatal(err)
	}
	x.rails.rule = logged.Rule(guardrails.KindTool, "be", "t")
	g.checkNotification(x, []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+
		strings.Repeat("AKIAIOSFODNN7EXAMPLE ", 64)+`<|im_start|>"}}`))
	rep := &x.rails.result
	rep.Reset("r", guardrails.DirResult)
	out, _ := rep.RewriteResult([]byte(`{"content":[]}`), x.rails.notes, x.rails.notesMore)
	var got struct {
		Meta map[string]struct {
			Findings []json.RawMessage `json:"findings"`
			More     int               `json:"more"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if a := got.Meta[guardrails.MetaKey]; len(a.Findings) != 32 || a.More != 29 {
		t.Errorf("the annotation lists %d and counts %d more, want 32 and 29: %s", len(a.Findings), a.More, out)
	}
}

// TestBackendErrorActions: a backend's JSON-RPC error is relayed as it is where a rule flags
// what it holds (an error has no _meta to name it in), redacted where it redacts, and replaced
// with the gateway's own error, the backend's text gone, where it blocks (docs/guardrails.md).
func TestBackendErrorActions(t *testing.T) {
	rec, err := metrics.NewGuardrails(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"mail a@example.org"}}`)
	for action, want := range map[string]string{
		"flag":   string(msg),
		"redact": `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"mail [REDACTED:email]"}}`,
		"block":  `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Refused by guardrail rule \"r\": found pii (email) in the backend's error at /error/message"}}`,
	} {
		engine, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Tools: []string{"*"},
			Results: guardrails.DirectionConfig{PII: action}}}})
		if err != nil {
			t.Fatal(err)
		}
		g := &railer{engine: engine, rec: rec, log: slog.New(slog.DiscardHandler), now: time.Now}
		x := &request{}
		x.in.req = &jsonrpc.Request{ID: []byte(`7`)}
		x.rails = g.state(engine.Rule(guardrails.KindTool, "be", "t"))
		if got := string(g.checkError(x, msg)); got != want {
			t.Errorf("%s: %s, want %s", action, got, want)
		}
	}
}
