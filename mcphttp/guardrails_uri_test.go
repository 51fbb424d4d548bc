package mcphttp

import (
	"testing"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestResourceURIScanAllocatesNothing: the scan of a read's URI that the client sent in its
// normal form, with nothing to find, costs no allocation; one with escapes is decoded and
// found.
func TestResourceURIScanAllocatesNothing(t *testing.T) {
	e, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Resources: []string{"*"},
		Arguments: guardrails.DirectionConfig{Secrets: "redact", PII: "redact"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rule := e.Rule(guardrails.KindResource, "alpha", "file:///srv/report.txt")
	scan := func(val, backend string) *paramsScan {
		ps := &paramsScan{rule: rule, rep: &guardrails.Report{}, method: upstreams.MethodResourcesRead, backendURI: backend}
		ps.resource([]byte(val), []byte("uri"))
		return ps
	}
	clean, backend := []byte(`"alpha+file:///srv/report.txt?page=2#top"`), "file:///srv/report.txt?page=2#top"
	ps := &paramsScan{rule: rule, rep: &guardrails.Report{}, method: upstreams.MethodResourcesRead, backendURI: backend}
	key := []byte("uri")
	// The one scan of the member as the client sent it (its Report) is what the params scan
	// of any member costs; the forms of the backend's URI add nothing.
	one := testing.AllocsPerRun(100, func() { rule.ScanArguments(clean) })
	if n := testing.AllocsPerRun(100, func() { ps.resource(clean, key) }); n > one {
		t.Errorf("a clean URI's scan: %v allocations, the member's own scan %v", n, one)
	}
	if ps := scan(string(clean), backend); ps.blocked != nil || ps.nameFound {
		t.Errorf("a clean URI was found: %+v", ps.rep)
	}
	ps = scan(`"alpha+file:///x?to=alice.smith%40mail.example.org"`, "file:///x?to=alice.smith%40mail.example.org")
	if ps.blocked == nil || !ps.nameFound || ps.blocked.Findings[0].Path != "/uri" || ps.blocked.Findings[0].Action != guardrails.Block {
		t.Errorf("an escaped e-mail address in a URI: %+v", ps.rep)
	}
}
