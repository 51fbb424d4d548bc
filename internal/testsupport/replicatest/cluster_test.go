package replicatest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// replicaCount is how many gateway processes run behind the balancer.
const replicaCount = 3

// cluster is the whole deployment: three gateway processes sharing one MRTR key, one
// redis-server and one issuer, fronting one go-sdk backend, behind HAProxy.
type cluster struct {
	redis    *testredis.Server
	issuer   *devissuer.Issuer
	alpha    *mcptest.Server
	replicas []*replica
	lb       *balancer
}

// startCluster starts every part and waits until the balancer sees all replicas up. The backend
// alpha serves mcptest's default tools and whatever opts add.
func startCluster(t *testing.T, opts ...mcptest.Option) *cluster {
	t.Helper()
	dir := t.TempDir()
	ports := freeport.Loopback(t, 2*replicaCount+2)
	lbPort, statsPort := ports[2*replicaCount], ports[2*replicaCount+1]
	c := &cluster{alpha: mcptest.StartServer(t, "alpha", opts...)}
	c.redis = testredis.Start(t, testredis.WithPassword(randomSecret(t)))
	writeSecret(t, filepath.Join(dir, "redis-password"), c.redis.Password())
	writeSecret(t, filepath.Join(dir, "mrtr-key"), randomSecret(t))
	settings := clusterSettings{
		dir:        dir,
		publicURL:  "http://127.0.0.1:" + strconv.Itoa(lbPort) + "/mcp",
		redisURL:   "redis://" + c.redis.Addr() + "/0",
		backendURL: c.alpha.URL(),
	}
	iss, err := devissuer.New(devissuer.Options{Audience: settings.publicURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	c.issuer, settings.issuer = iss, iss.URL()

	var servers []balancerServer
	for i := range replicaCount {
		r := newReplica(t, "r"+strconv.Itoa(i+1), ports[2*i], ports[2*i+1], settings)
		c.replicas = append(c.replicas, r)
		servers = append(servers, balancerServer{Name: r.name, Addr: r.mcpAddr, AdminPort: ports[2*i+1]})
	}
	// Registered after the replicas' own cleanups, so it runs first: all three drain at once
	// instead of one drainDelay after another.
	t.Cleanup(func() {
		for _, r := range c.replicas {
			if r.proc != nil {
				r.proc.signal(syscall.SIGTERM)
			}
		}
	})
	for _, r := range c.replicas {
		r.start(t)
	}
	c.lb = startBalancer(t, dir, lbPort, statsPort, servers)
	c.waitAllUp(t)
	return c
}

// waitAllUp waits until every replica is ready and the balancer has every one in rotation.
func (c *cluster) waitAllUp(t *testing.T) {
	t.Helper()
	for _, r := range c.replicas {
		if err := waitFor(readyTimeout, r.ready); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if err := c.lb.waitState(r.name, "UP"); err != nil {
			t.Fatalf("balancer: %v", err)
		}
	}
}

// client returns a raw MCP client for a new user with the scope every rule asks for.
func (c *cluster) client(t *testing.T, subject string) *mcpClient {
	t.Helper()
	tok, err := c.issuer.Mint(devissuer.Claims{"sub": subject, "scope": scopeUse})
	if err != nil {
		t.Fatal(err)
	}
	return newClient(tok)
}

// backendCalls counts the tools/call requests for tool that reached the backend.
func (c *cluster) backendCalls(tool string) int {
	n := 0
	for _, ex := range c.alpha.Requests() {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(ex.Body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == tool {
			n++
		}
	}
	return n
}

func randomSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeSecret(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}
