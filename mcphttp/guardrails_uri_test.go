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

// TestResourceURIFindingUnderLog: a finding in the URI a request names is only logged where the
// rule logs (docs/guardrails.md: "log stays log"); it refuses nothing, and the request's log
// lines leave the URI out all the same.
func TestResourceURIFindingUnderLog(t *testing.T) {
	e, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Resources: []string{"*"},
		Arguments: guardrails.DirectionConfig{Secrets: "log"}}}})
	if err != nil {
		t.Fatal(err)
	}
	const key = "AKIAIOSFODNN7EXAMPLE"
	ps := &paramsScan{rule: e.Rule(guardrails.KindResource, "alpha", "file:///x"), rep: &guardrails.Report{},
		method: upstreams.MethodResourcesRead, backendURI: "file:///x?k=" + key}
	ps.resource([]byte(`"alpha+file:///x?k=`+key+`"`), []byte("uri"))
	if ps.blocked != nil || ps.rep.Blocked() || ps.rep.Action != guardrails.Log || ps.rep.Counts[guardrails.DetAWSAccessKey] == 0 || !ps.nameFound {
		t.Errorf("a key in a URI under log: blocked %v, action %v, counted %d, left out of the log lines %v",
			ps.blocked != nil, ps.rep.Action, ps.rep.Counts[guardrails.DetAWSAccessKey], ps.nameFound)
	}
}
