package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/otlptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// outChannel is one way a value can leave the gateway.
type outChannel int

const (
	outLog         outChannel = iota // every log line, at debug level
	outAdmin                         // what the admin listener answers: /metrics, /readyz
	outSpans                         // exported spans: names, attributes, resources
	outRedis                         // every key and value in the shared store after the run
	outPubSub                        // every message published on the shared store during the run
	outBackend                       // what a backend received: headers, path, query and body
	outInterceptor                   // what an interceptor received: headers and invocations
	outRefusal                       // what a client got back from a refusal of the gateway's own
	outClient                        // what a client got back otherwise (results, a backend's own errors)
	outChannels
)

var outNames = [outChannels]string{"log", "admin listener", "spans", "redis", "redis pub/sub", "backend", "interceptor",
	"refusal", "client answer"}

// canary is one value a client, the configuration or an authorization server gives the
// gateway, which may leave it only by the channels in may.
type canary struct {
	what  string
	value string
	may   [outChannels]bool
}

// canaries hands out a distinct value per thing worth hiding.
type canaries struct {
	mu   sync.Mutex
	list []canary
}

// argument: a value the caller sent for the backend. It may reach the backend and the
// interceptors, and come back in the caller's own results; the gateway itself keeps it out of
// everything else.
func (cs *canaries) argument(what string) string {
	return cs.add(what, outBackend, outInterceptor, outClient)
}

// refused: an argument value the gateway refuses. It reaches no backend and no refusal quotes
// it; the interceptors, which run before the guardrails (docs/interceptors.md), see it.
func (cs *canaries) refused(what string) string { return cs.add(what, outInterceptor) }

// pathName: a member name the gateway refuses. A refusal names the failing path, of which the
// member's name is a part.
func (cs *canaries) pathName(what string) string { return cs.add(what, outInterceptor, outRefusal) }

// uri: a resource URI the caller names. The access line names it (docs/observability.md), so
// it may reach the log too.
func (cs *canaries) uri(what string) string {
	return cs.add(what, outBackend, outInterceptor, outClient, outLog)
}

// secret: a credential that may reach only where listed.
func (cs *canaries) secret(what string, may ...outChannel) string { return cs.add(what, may...) }

func (cs *canaries) add(what string, may ...outChannel) string {
	cs.mu.Lock()
	n := len(cs.list)
	cs.mu.Unlock()
	// At least 32 bytes, as an MRTR key must be; letters and digits only, which every
	// schema, header and URI here takes as they are.
	v := fmt.Sprintf("cnry%02d%sQZ", n, strings.NewReplacer(" ", "", "-", "", "'", "", ".", "").Replace(what))
	v += strings.Repeat("x", max(0, 32-len(v)))
	cs.also(what, v, may...)
	return v
}

// also adds a value known only once it exists (a token), with the channels it may reach.
func (cs *canaries) also(what, value string, may ...outChannel) {
	c := canary{what: what, value: value}
	for _, ch := range may {
		c.may[ch] = true
	}
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
}

// outputs collects what left the gateway, by channel.
type outputs struct {
	mu sync.Mutex
	by [outChannels][]string
}

func (o *outputs) add(ch outChannel, s ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.by[ch] = append(o.by[ch], s...)
}

// check reports every canary found in a channel it may not reach, after making sure that each
// channel captured what shows it reaching the test (markers, by channel).
func (o *outputs) check(t *testing.T, cs *canaries, markers [outChannels]string) {
	t.Helper()
	for ch := range outChannels {
		if !slices.ContainsFunc(o.by[ch], func(s string) bool { return strings.Contains(s, markers[ch]) }) {
			t.Errorf("channel %s lacks %q: is it reaching the test?", outNames[ch], markers[ch])
		}
		for _, c := range cs.list {
			if c.may[ch] {
				continue
			}
			for _, s := range o.by[ch] {
				if i := strings.Index(s, c.value); i >= 0 {
					t.Errorf("%s reached the %s: …%s…", c.what, outNames[ch], s[max(0, i-200):min(len(s), i+len(c.value)+100)])
					break
				}
			}
		}
	}
}

// TestSecretsAndValuesStayIn gives the gateway a distinct canary for every value worth hiding
// (the caller's token and its parts, refused and malformed credentials, a cookie and a query
// string, argument values nested and as a member name, prompt arguments and completions,
// resource URIs, answers to a backend's elicitation in both eras, values refused by schema, a
// guardrail or an interceptor or echoed in a backend's error or broken answer, a call waiting
// for the approval page, and the configured MRTR key, backend credential and Redis password)
// and drives successes and every kind of refusal through a real gateway with a real issuer,
// Redis, interceptor server and go-sdk backends of both eras, for clients of both eras. Then
// every channel by which anything leaves the gateway (debug log, admin listener, exported
// spans, every Redis key and value, every Redis publication, what the backends and the
// interceptors received, what the clients got back) is searched for every canary that may
// not reach it. A new value or channel is one line in the table.
func TestSecretsAndValuesStayIn(t *testing.T) {
	cs := &canaries{}
	out := &outputs{}
	mrtrKey := cs.secret("the MRTR key")
	backendKey := cs.secret("the backend credential", outBackend)
	redisPassword := cs.secret("the Redis password")
	collectorKey := cs.secret("the trace collector's credential")
	// The interceptor's words reach the caller only with showReason, which is off here.
	refusal := cs.secret("an interceptor's refusal message")

	iss := newIssuer(t)
	col := otlptest.Start(t, 0)
	rs := testredis.Start(t, testredis.WithPassword(redisPassword))
	stopWatch := watchPublications(t, rs, out)
	queries := &seenQueries{}
	alpha := mcptest.StartServer(t, "alpha", flowTools(queries)...)
	beta := mcptest.StartLegacyServer(t, "beta", flowTools(queries)...)
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "look", Type: intercept.TypeValidation, Handle: intercepttest.Allow()},
		{Name: "refuse", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf(flowDenyMarker, refusal)},
	})

	t.Run("traffic", func(t *testing.T) {
		gw, logs, stop := startLoggedGateway(t, func(c *Config) {
			trustIssuers(c, iss)
			c.Redis.URL = rs.URL()
			c.MRTR.Keys = []KeyConfig{{ID: "k1", Secret: Secret{Value: mrtrKey}}}
			for i := range c.Upstreams {
				c.Upstreams[i].Headers = map[string]Secret{"X-Api-Key": {Value: backendKey}}
			}
			c.Tracing = TracingConfig{Config: tracing.Config{Endpoint: col.URL, Insecure: true, ServiceName: "gw-flow"},
				Headers: map[string]Secret{"X-Collector-Key": {Value: collectorKey}}}
			c.Auth.Policy.Rules = []authz.RuleConfig{
				{ID: "confirm", Upstream: "*", Tools: []string{"echo"}, Confirm: authz.ConfirmForm},
				{ID: "page", Upstream: "*", Tools: []string{"page"}, Confirm: authz.ConfirmURL},
				{ID: "tools", Upstream: "*", Tools: []string{"doc", "complain", "ask_name", "garble", "notify"}},
				{ID: "content", Upstream: "*", Prompts: []string{"*"}, Resources: []string{"**"}},
			}
			for _, name := range []string{"look", "refuse"} {
				c.Interceptors = append(c.Interceptors, InterceptorConfig{Config: intercept.Config{Name: name, URL: ics.URL(),
					Type: intercept.TypeValidation, Rules: []intercept.RuleConfig{{Upstream: "*", Tools: []string{"doc", "page"},
						Prompts: []string{"*"}, Resources: []string{"**"}, Phases: []string{"request", "response"}}}}})
			}
			c.Approval.ClientID = "gateway-approval"
			c.Toolsets = []mcphttp.ToolsetConfig{{Name: "search", Include: []mcphttp.SelectorConfig{{}},
				Search: mcphttp.SearchConfig{Enabled: true}}}
			c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "doc", Tools: []string{"doc"},
				Validate: guardrails.ValidateConfig{Arguments: "block"}, Arguments: guardrails.DirectionConfig{PII: "block"}}}}
		}, alpha, beta)
		token := mintFor(t, iss, "alice")
		cs.also("the caller's token", token)
		for i, part := range strings.Split(token, ".") {
			cs.also(fmt.Sprintf("part %d of the caller's token", i), part)
		}
		for i, bad := range badTokens(t, iss) {
			cs.also(fmt.Sprintf("refused token %d", i), bad)
			cs.also(fmt.Sprintf("the signature of refused token %d", i), bad[strings.LastIndexByte(bad, '.')+1:])
			h := modernHeaders("tools/call", "alpha__doc")
			h.Set("Authorization", "Bearer "+bad)
			status, _, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+
				testMeta+`,"name":"alpha__doc","arguments":{}}}`)
			if status != http.StatusUnauthorized {
				t.Errorf("refused token %d: %d %s", i, status, body)
			}
			out.add(outRefusal, body)
		}
		flowMalformed(t, gw, token, cs, out)
		for _, era := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(era, func(t *testing.T) { flowTraffic(t, gw, token, era, cs, out) })
		}
		out.add(outAdmin, get(t, "http://"+gw.Admin+"/metrics"), get(t, "http://"+gw.Admin+"/readyz"))
		// The store goes away: what the gateway says of its failures names no secret.
		stopWatch()
		out.add(outRedis, redisDump(t, rs)...)
		rs.Stop()
		flowStoreDown(t, gw, token, cs, out)
		out.add(outAdmin, get(t, "http://"+gw.Admin+"/readyz"))
		stop()
		out.add(outLog, logs.String())
	})
	for _, s := range col.Spans() {
		out.add(outSpans, fmt.Sprint(s.Name, s.Attributes, s.Resource))
	}
	for _, b := range []*mcptest.Server{alpha, beta} {
		for _, ex := range b.Requests() {
			out.add(outBackend, fmt.Sprint(ex.Path, ex.Header), string(ex.Body))
		}
	}
	out.add(outBackend, queries.seen()...)
	for _, h := range ics.Headers() {
		out.add(outInterceptor, fmt.Sprint(h))
	}
	for _, inv := range ics.Invocations() {
		b, _ := json.Marshal(inv)
		out.add(outInterceptor, string(b))
	}
	out.check(t, cs, [outChannels]string{
		outLog:         `"msg":"interceptor"`,
		outAdmin:       "mcp_gateway_requests_total",
		outSpans:       "gw-flow",
		outRedis:       "mcpgw:",
		outPubSub:      "legacy-session-state",
		outBackend:     backendKey,
		outInterceptor: `"name":"refuse"`,
		outRefusal:     "Refused by guardrail rule",
		outClient:      "Hello, ",
	})
}

// redisDump reads every key and its value, whatever its type.
func redisDump(t *testing.T, rs *testredis.Server) []string {
	t.Helper()
	keys, err := rs.Do("KEYS", "*")
	if err != nil {
		t.Fatal(err)
	}
	var dump []string
	for _, k := range strings.Split(keys, "\n") {
		if k == "" {
			continue
		}
		typ, err := rs.Do("TYPE", k)
		if err != nil {
			t.Fatal(err)
		}
		if typ == "none" {
			continue // expired between KEYS and TYPE (a rate-limit key lives 10 s): nothing to read
		}
		read := map[string][]string{"string": {"GET", k}, "hash": {"HGETALL", k}, "list": {"LRANGE", k, "0", "-1"},
			"set": {"SMEMBERS", k}, "zset": {"ZRANGE", k, "0", "-1"}, "stream": {"XRANGE", k, "-", "+"}}[typ]
		if read == nil {
			t.Errorf("redis key %q of type %s not read", k, typ)
			continue
		}
		v, err := rs.Do(read...)
		if err != nil {
			t.Fatalf("%v: %v", read, err)
		}
		dump = append(dump, k, v)
	}
	return dump
}

// watchPublications records every message published on rs until the returned stop is called.
func watchPublications(t *testing.T, rs *testredis.Server, out *outputs) (stop func()) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", rs.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n*2\r\n$10\r\nPSUBSCRIBE\r\n$1\r\n*\r\n", len(rs.Password()), rs.Password())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			out.add(outPubSub, line)
		}
	}()
	return func() {
		conn.Close()
		<-done
	}
}
