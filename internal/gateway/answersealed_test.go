package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestForwardedAnswerSealedInRedis: a pre-2026 client's answer to a backend's elicitation
// (what the user typed, which may be a secret the backend asked for) POSTed to another replica
// than the one that asked is handed to that one through Redis pub/sub. Whoever may subscribe
// on that Redis (another tenant's ACL user, MONITOR, a Redis proxy's log) must not read it: the
// answer crosses Redis sealed, like every other value of the caller's the store holds. Every
// publication during the exchange is recorded, and the answer is in none of them, while the
// backend still gets it.
func TestForwardedAnswerSealedInRedis(t *testing.T) {
	const typed = "typed-answer-secret-7e2a"
	redis := testredis.Start(t)
	out := &outputs{}
	stop := watchPublications(t, redis, out)
	backend := startRelayBackend(t)
	a := relayGateway(t, backend, "2025-11-25", redis.URL())
	b := relayGateway(t, backend, "2025-11-25", redis.URL())
	raw := &legacyclient.Raw{}
	sid := raw.Initialize(t, a)
	st := raw.Open(t, a, sid, raw.CallArgs("old__"+toolRelay, `{"what":"elicit"}`))
	req := st.NextRequest(t, "elicitation/create")
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":%q}}}`, req.ID, typed)
	if r := raw.Post(t, b, sid, answer); r.Status != http.StatusAccepted {
		t.Fatalf("answer on replica B: %s", r)
	}
	res := st.NextResult(t)
	msg := json.RawMessage(`{"result":` + string(res.Result) + `}`)
	if got := legacyclient.ResultText([]json.RawMessage{msg}); got != "elicit: accept "+typed {
		t.Errorf("result %s error %s, want the backend to have got the answer", res.Result, res.Error)
	}
	stop()
	published := strings.Join(out.by[outPubSub], "")
	if !strings.Contains(published, `"t":"a"`) {
		t.Fatalf("no answer was forwarded through Redis; publications:\n%s", published)
	}
	if strings.Contains(published, typed) {
		t.Errorf("the answer crossed Redis in clear:\n%s", published)
	}
}
