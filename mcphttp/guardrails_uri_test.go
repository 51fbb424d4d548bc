package mcphttp

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/metrics"
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

// uriScans counts the scans of each backend URI (railer.uriScanned).
type uriScans struct {
	mu sync.Mutex
	n  map[string]int
}

func (u *uriScans) scanned(uri string) {
	u.mu.Lock()
	u.n[uri]++
	u.mu.Unlock()
}

func (u *uriScans) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[uri]
}

// TestResourceURIScannedOnce: the URI a read or a completion of a template names is scanned
// once per request, where routing resolves it (the log lines before stage guardrails need the
// verdict); stage guardrails adds that scan's findings to the request's report rather than
// scanning the URI again. A finding still refuses the read, naming /uri, and the completion,
// naming /ref/uri; the ref's other members are still read.
func TestResourceURIScannedOnce(t *testing.T) {
	engine, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Resources: []string{"*"},
		Arguments: guardrails.DirectionConfig{Secrets: "block", PII: "block"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := metrics.NewGuardrails(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	be := mcptest.StartServer(t, "be")
	s, e := testServer(t, Config{}, oneBackend(be.URL()), upstreams.Options{}, Deps{Version: "test", Guardrails: engine, GuardrailMetrics: rec})
	scans := &uriScans{n: map[string]int{}}
	s.rails.uriScanned = scans.scanned
	url := serveTest(t, e).URL + DefaultPath
	const mail = "alice.smith@mail.example.org"
	for _, tc := range []struct {
		name, method, uri, params string
		code                      int
		where                     string
	}{
		{"clean read", "resources/read", "mem://readme", `,"uri":"be+mem://readme"`, 0, ""},
		{"read with an address", "resources/read", "mem://readme?to=" + mail, `,"uri":"be+mem://readme?to=` + mail + `"`, -32602, "/uri"},
		{"clean completion", "completion/complete", "mem://items/{id}",
			`,"ref":{"type":"ref/resource","uri":"be+mem://items/{id}"},"argument":{"name":"id","value":"a"}`, 0, ""},
		{"completion with an address", "completion/complete", "mem://items/{id}?to=" + mail,
			`,"ref":{"type":"ref/resource","uri":"be+mem://items/{id}?to=` + mail + `"},"argument":{"name":"id","value":"a"}`, -32602, "/ref/uri"},
		{"completion with an address beside its uri", "completion/complete", "mem://items/{id}",
			`,"ref":{"type":"ref/resource","uri":"be+mem://items/{id}","note":"` + mail + `"},"argument":{"name":"id","value":"a"}`, -32602, "/ref/note"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := scans.count(tc.uri)
			name := "be+" + tc.uri
			if tc.method == "completion/complete" {
				name = "" // Mcp-Name mirrors nothing of a completion
			}
			r := do(t, "POST", url, modern(tc.method, name), body(tc.method, tc.params))
			if tc.code == 0 && r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			checkRPC(t, r, tc.code)
			if tc.where != "" && !strings.Contains(string(r.Body), tc.where) {
				t.Errorf("the refusal does not name %s: %s", tc.where, r.Body)
			}
			if n := scans.count(tc.uri) - before; n != 1 {
				t.Errorf("the URI was scanned %d times, want once", n)
			}
		})
	}
}

// TestResourceURIRoutingScanCopiesNothing: routing's scan of the URI a read names, sent in its
// normal form without escapes, makes no copy of it: it costs the scan of the member itself and
// the report routing keeps, as resource's comment says. A URI written with a JSON escape is
// encoded anew, which is what the comparison shows the test can see.
func TestResourceURIRoutingScanCopiesNothing(t *testing.T) {
	e, err := guardrails.New(&guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "r", Resources: []string{"*"},
		Arguments: guardrails.DirectionConfig{Secrets: "redact", PII: "redact"}}}})
	if err != nil {
		t.Fatal(err)
	}
	g := &railer{engine: e}
	x := &request{}
	x.route.kind, x.route.upstream, x.route.upstreamName = upstreams.KindResource, "alpha", "file:///srv/report.txt?page=2#top"
	const sent = "alpha+file:///srv/report.txt?page=2#top"
	member := []byte(`"` + sent + `"`)
	rule := e.Rule(guardrails.KindResource, "alpha", x.route.upstreamName)
	scan := testing.AllocsPerRun(100, func() { rule.ScanArguments(member) })
	read := func(params string) float64 {
		x.in.req = &jsonrpc.Request{Method: upstreams.MethodResourcesRead, Params: []byte(params)}
		return testing.AllocsPerRun(100, func() {
			if u := g.scanURI(x, sent); u.found() {
				t.Fatal("a clean URI was found")
			}
		})
	}
	const routingReport = 1
	plain := read(`{"_meta":{},"uri":"` + sent + `"}`)
	if plain > scan+routingReport {
		t.Errorf("routing's scan of a URI in normal form: %v allocations, want at most %v (the member's scan and routing's report)", plain, scan+routingReport)
	}
	if escaped := read(`{"uri":"\u0061lpha+file:///srv/report.txt?page=2#top"}`); escaped <= plain {
		t.Errorf("a URI written with an escape: %v allocations, not more than one without (%v)", escaped, plain)
	}
}

// TestSentJSON: the URI a read or a completion names is scanned in the params' own bytes when
// they spell it without escapes, and encoded anew otherwise (escapes, or params that do not
// hold it as sent).
func TestSentJSON(t *testing.T) {
	const sent = "be+mem://x/a?b=c"
	for _, tt := range []struct {
		params string
		own    bool
	}{
		{`{"uri":"be+mem://x/a?b=c"}`, true},
		{`{"_meta":{"k":"v"},"uri":"be+mem://x/a?b=c"}`, true},
		{`{"ref":{"type":"ref/resource","uri":"be+mem://x/a?b=c"},"argument":{"name":"a","value":"b"}}`, true},
		{`{"uri":"be+mem:\/\/x/a?b=c"}`, false},
		{`{"uri":"be+mem://x/b"}`, false},
		{`{}`, false},
		{``, false},
	} {
		params := []byte(tt.params)
		got := sentJSON(params, sent)
		if want := jsonrpc.AppendString(nil, sent); !bytes.Equal(got, want) {
			t.Errorf("%s: %s, want %s", tt.params, got, want)
		}
		// The params' own bytes change with them; a copy does not.
		for i := range params {
			params[i] = 'X'
		}
		if own := bytes.Contains(got, []byte("X")); own != tt.own {
			t.Errorf("%s: the params' own bytes %v, want %v", tt.params, own, tt.own)
		}
	}
}
