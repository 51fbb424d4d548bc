package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsResourceURI: the resource URI a request names is what the backend acts on, so
// the argument detectors read it, in every form a backend may act on (as sent, its normal form
// with unreserved escapes decoded, percent- and form-decoded), in a read, a pre-2026
// subscription (which reads) and a completion's ref. A finding refuses the request even where
// the rule redacts (a redacted URI would read another resource); the refusal names the member
// and never the text; the backend receives nothing; a clean URI still reads; no log line holds
// the credential. In both eras.
func TestGuardrailsResourceURI(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "uris", Resources: []string{"*"},
			Arguments: guardrails.DirectionConfig{Secrets: "redact"}}}}
	}, alpha)
	defer stop()
	gh := strings.TrimPrefix(railGHToken, "g")
	uris := []string{
		"alpha+file:///x?token=" + railGHToken,                                            // in the query
		"alpha+https://h.example/p#" + railAWSKey,                                         // in the fragment
		"alpha+file:///x?token=%67" + gh,                                                  // an unreserved character escaped
		"alpha+file:///x?token=%67%68%70_" + gh[3:],                                       // several
		"alpha+file:///x?k=-----BEGIN%20RSA%20PRIVATE%20KEY-----",                         // found once percent-decoded
		"alpha+file:///x?k=-----BEGIN+RSA+PRIVATE+KEY-----",                               // found once form-decoded
		"alpha+HTTPS://h.example/p?u=" + strings.ToLower(railAWSKey) + "&k=" + railAWSKey, // as sent
		"alpha+file:///srv/keys/" + railAWSKey + ".txt",                                   // in the path, after a separator
		"alpha+https://h.example/v1/" + railGHToken,                                       // the same over https
	}
	secrets := []string{railGHToken, railAWSKey, gh, "PRIVATE"}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
			alpha.Reset()
			for _, uri := range uris {
				_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				refusedWithout(t, "read of "+uri, err, "/uri", secrets)
			}
			_, err := cs.Complete(t.Context(), &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "alpha+mem://items/{id}?t=%67" + gh},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}})
			refusedWithout(t, "completion", err, "/ref/uri", secrets)
			if version == "2025-11-25" {
				err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uris[2]})
				refusedWithout(t, "subscription", err, "/uri", secrets)
			} else {
				listenRefused(t, gw, `["alpha+mem://readme",`+strconv.Quote(uris[5])+`]`, secrets)
			}
			if n := len(alpha.RequestsOf("resources/read")) + len(alpha.RequestsOf("completion/complete")); n != 0 {
				t.Errorf("the backend got %d refused requests", n)
			}
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+" + mcptest.ResourceReadme}); err != nil {
				t.Errorf("a clean read: %v", err)
			}
		})
	}
	stop()
	for _, s := range secrets[:3] {
		if i := strings.Index(logs.String(), s); i >= 0 {
			t.Error("a log line holds a matched value", logs.String()[i:min(len(logs.String()), i+300)])
		}
	}
}

// listenRefused opens a subscriptions/listen of the resources subs through gw and checks that
// it is refused by the guardrails, naming the subscription and none of secrets; a listen of a
// clean URI is acknowledged.
func listenRefused(t *testing.T, gw Listeners, subs string, secrets []string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + testMeta +
		`,"notifications":{"resourceSubscriptions":` + subs + `}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(body))
	req.Header = modernHeaders("subscriptions/listen", "")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var answer struct{ Error struct{ Message string } }
	if err := json.Unmarshal(got, &answer); err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("listen: %d %s", res.StatusCode, got)
	}
	refusedWithout(t, "listen", errors.New(answer.Error.Message), "/notifications/resourceSubscriptions/1", secrets)
	for _, s := range secrets {
		if strings.Contains(string(got), s) {
			t.Errorf("the listen's refusal quotes what it found: %s", got)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if ack := <-listen(t, ctx, gw, `{"resourceSubscriptions":["alpha+mem://readme"]}`, ""); !strings.Contains(ack, "acknowledged") {
		t.Errorf("a clean listen: %s", ack)
	}
}

// refusedWithout checks that err is the guardrail refusal naming the member at path, and that
// it quotes none of secrets.
func refusedWithout(t *testing.T, what string, err error, path string, secrets []string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), `guardrail rule "uris"`) || !strings.Contains(err.Error(), "params at "+path) {
		t.Errorf("%s: %v", what, err)
		return
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: the refusal quotes what it found: %v", what, err)
		}
	}
}
