package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// readyz fetches /readyz from a gateway's admin listener.
func readyz(t *testing.T, gw Listeners) (int, readinessBody) {
	t.Helper()
	res, err := http.Get("http://" + gw.Admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body readinessBody
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("/readyz body %q: %v", b, err)
	}
	return res.StatusCode, body
}

type readinessBody struct {
	Ready  bool
	Checks map[string]string
}

// TestRedisReadiness: with Redis gone, a replica with the default admin.redisReadiness leaves
// the load balancer (503), one with "advisory" stays ready and says what failed; both report
// the redis check, and both go on serving what needs no shared state.
func TestRedisReadiness(t *testing.T) {
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	withRedis := func(readiness string) func(*Config) {
		return func(c *Config) {
			c.Redis.URL = redis.URL()
			c.Admin.RedisReadiness = readiness
		}
	}
	required := startTestGateway(t, withRedis(""), alpha) // the default
	advisory := startTestGateway(t, withRedis("advisory"), alpha)
	for name, gw := range map[string]Listeners{"required": required, "advisory": advisory} {
		if status, body := readyz(t, gw); status != http.StatusOK || body.Checks["redis"] != "ok" || body.Checks["notices"] != "ok" {
			t.Fatalf("%s with Redis up: /readyz %d %+v", name, status, body)
		}
	}

	redis.Stop()
	if status, body := readyz(t, required); status != http.StatusServiceUnavailable || body.Ready || body.Checks["redis"] == "ok" {
		t.Errorf("required with Redis down: /readyz %d %+v, want 503 with the redis error", status, body)
	}
	if status, body := readyz(t, advisory); status != http.StatusOK || !body.Ready || body.Checks["redis"] == "ok" || body.Checks["redis"] == "" {
		t.Errorf("advisory with Redis down: /readyz %d %+v, want 200, ready, with the redis error", status, body)
	}
	for name, gw := range map[string]Listeners{"required": required, "advisory": advisory} {
		if names := listToolNames(t, gw); len(names) == 0 {
			t.Errorf("%s with Redis down lists no tools", name)
		}
	}
}

func TestRedisReadinessValidated(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("admin: { redisReadiness: sometimes }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig("serve", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0",
		"--upstream", "a=http://127.0.0.1:1/mcp"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `admin.redisReadiness: "sometimes": want required or advisory`) {
		t.Fatalf("err = %v, want admin.redisReadiness refused", err)
	}
}

// TestReadinessRefusesOldRedis: a Redis older than 7.0 answers PING, reads and plain writes, and
// then refuses the records' scripts (PEXPIRETIME) and single-use writes (SET with NX and GET),
// so every confirmation, pin record and vault write would fail. A replica in front of one is
// not ready, and /readyz names the version; check-config --online fails naming it too. The
// Redis is a real redis-server announcing itself as 6.x through a relay that rewrites only the
// version in its answers.
func TestReadinessRefusesOldRedis(t *testing.T) {
	rs := testredis.Start(t)
	addr, older := rs.OlderVersion(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) { c.Redis.URL = "redis://" + addr }, alpha)
	status, body := readyz(t, gw)
	if status != http.StatusServiceUnavailable || body.Ready || !strings.Contains(body.Checks["redis"], "redis "+older+" is older than 7.0") {
		t.Errorf("/readyz with Redis %s: %d %+v, want 503 naming the version", older, status, body)
	}
	checkOnlineLines(t, "redis: {url: \"redis://"+addr+"\"}\n", true,
		[]string{`(?m)^FAILED redis redis://` + regexp.QuoteMeta(addr) + `/?\S*: redis ` + regexp.QuoteMeta(older) + ` is older than 7\.0`})

	direct := startTestGateway(t, func(c *Config) { c.Redis.URL = rs.URL() }, alpha)
	if status, body := readyz(t, direct); status != http.StatusOK || body.Checks["redis"] != "ok" {
		t.Errorf("/readyz with the same Redis announcing its own version: %d %+v, want 200", status, body)
	}
}

// TestProbesAnswerEveryProbeMethod: /readyz and /healthz answer HEAD and OPTIONS as they answer
// GET, with the replica's real status: HAProxy's `option httpchk /readyz` sends
// "OPTIONS /readyz HTTP/1.0" (OPTIONS is its default method) and other balancers send HEAD, and
// a 204 to OPTIONS whatever the replica's state kept a replica without Redis in rotation. Every
// other method is 405 with the Allow of the methods served, on these and the admin's other routes.
func TestProbesAnswerEveryProbeMethod(t *testing.T) {
	redis := testredis.Start(t)
	gw := startTestGateway(t, func(c *Config) { c.Redis.URL = redis.URL() }, mcptest.StartServer(t, "alpha"))
	probe := func(method, path string) reply {
		// Declared an empty JSON body, so that the admin listener's body check lets a POST through
		// to the route.
		return rawExchange(t, gw.Admin, method+" "+path+" HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n")
	}
	check := func(state string, want int) {
		t.Helper()
		for path, want := range map[string]int{"/readyz": want, "/healthz": http.StatusOK} { // alive whatever Redis does
			for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
				got := probe(method, path)
				if got.status != want {
					t.Errorf("%s: %s %s is %d, want %d", state, method, path, got.status, want)
				}
				if method == http.MethodHead && got.body != "" {
					t.Errorf("%s: HEAD %s has a body: %q", state, path, got.body)
				}
			}
		}
	}
	check("Redis up", http.StatusOK)
	for path, allow := range map[string]string{"/readyz": "GET, HEAD, OPTIONS", "/healthz": "GET, HEAD, OPTIONS", "/metrics": "GET, HEAD"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodTrace, "BREW"} {
			if got := probe(method, path); got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != allow {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", method, path, got.status, got.header.Get("Allow"), allow)
			}
		}
	}
	if got := probe(http.MethodHead, "/metrics"); got.status != http.StatusOK {
		t.Errorf("HEAD /metrics: %d", got.status)
	}
	if got := probe(http.MethodOptions, "/metrics"); got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("OPTIONS /metrics: %d, Allow %q", got.status, got.header.Get("Allow"))
	}
	redis.Stop()
	check("Redis down", http.StatusServiceUnavailable)
}
