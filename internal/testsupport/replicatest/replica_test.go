package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// Settings shared by every replica's configuration.
const (
	// drainDelay is how long a replica keeps serving, not ready, after SIGTERM: several times
	// the balancer's check interval (checkInterval), so the balancer has marked the replica
	// down before it stops accepting (docs/deploy.md).
	drainDelay = 1500 * time.Millisecond
	// readyTimeout bounds waiting for a started replica to report ready.
	readyTimeout = 15 * time.Second
	// mrtrKeyID names the one sealing key all replicas share.
	mrtrKeyID = "replicatest-1"
	// scopeUse is the scope every policy rule asks for.
	scopeUse = "tools:use"
	// limitAdd is the rate limit on alpha's add tool, shared through Redis.
	limitAdd = "5/m"
	// limitBurst is how many add calls limitAdd admits back to back.
	limitBurst = 5
	// limitLeased is the rate limit on alpha's whoami tool: a burst large enough that each
	// replica leases min(rateLimit.lease, burst ÷ 8) = 16 tokens at a time (the last lease of
	// the burst is partial), and a refill slow enough (one token per 10 s) that the test's count
	// hardly moves while it runs.
	limitLeased = "6/m burst 130"
	// leasedBurst and leasedLease are limitLeased's burst and the lease each replica takes.
	leasedBurst, leasedLease = 130, 16
	// leasedRefill is limitLeased's refill interval.
	leasedRefill = 10 * time.Second
)

// clusterSettings are what every replica's configuration file shares.
type clusterSettings struct {
	dir        string // where config and secret files are written
	publicURL  string // the balancer's URL: the audience of every token
	issuer     string
	redisURL   string
	backendURL string // the go-sdk backend named alpha
}

// replica is one gateway process, restartable on the same ports.
type replica struct {
	name       string
	mcpAddr    string
	adminAddr  string
	configPath string
	logPath    string
	proc       *process
}

// newReplica writes the replica's configuration file; start runs it.
func newReplica(t *testing.T, name string, mcpPort, adminPort int, s clusterSettings) *replica {
	t.Helper()
	r := &replica{
		name:       name,
		mcpAddr:    fmt.Sprintf("127.0.0.1:%d", mcpPort),
		adminAddr:  fmt.Sprintf("127.0.0.1:%d", adminPort),
		configPath: filepath.Join(s.dir, name+".yaml"),
		logPath:    filepath.Join(s.dir, name+".log"),
	}
	b, err := yaml.Marshal(r.config(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.configPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.stop(t)
		dumpLog(t, name, r.logPath)
	})
	return r
}

// config is the replica's YAML document. The policy has rules that need confirmation (echo, and
// ask_rounds, whose backend then asks for input itself),
// one with a rate limit (add) and one for the rest; secrets come from files, as in production.
func (r *replica) config(s clusterSettings) map[string]any {
	return map[string]any{
		"server": map[string]any{
			"listen": r.mcpAddr, "publicURL": s.publicURL,
			"drainDelay": drainDelay.String(), "shutdownTimeout": "10s",
		},
		"admin": map[string]any{"listen": r.adminAddr},
		"log":   map[string]any{"level": "info", "format": "json"},
		"auth": map[string]any{
			"issuers": []any{map[string]any{"issuer": s.issuer}},
			"policy": map[string]any{"rules": []any{
				map[string]any{"id": "confirm-echo", "upstream": "alpha", "tools": []string{"echo"}, "anyScope": []string{scopeUse}, "confirm": true},
				map[string]any{"id": "confirm-rounds", "upstream": "alpha", "tools": []string{"ask_rounds"}, "anyScope": []string{scopeUse}, "confirm": true},
				map[string]any{"id": "limit-add", "upstream": "alpha", "tools": []string{"add"}, "anyScope": []string{scopeUse}, "rateLimit": limitAdd},
				map[string]any{"id": "limit-leased", "upstream": "alpha", "tools": []string{"whoami"}, "anyScope": []string{scopeUse}, "rateLimit": limitLeased},
				map[string]any{"id": "rest", "upstream": "alpha", "tools": []string{"*"}, "anyScope": []string{scopeUse}},
			}},
		},
		"mrtr": map[string]any{"keys": []any{map[string]any{
			"id": mrtrKeyID, "secret": map[string]any{"file": filepath.Join(s.dir, "mrtr-key")},
		}}},
		"redis": map[string]any{
			"url":      s.redisURL,
			"password": map[string]any{"file": filepath.Join(s.dir, "redis-password")},
		},
		"upstreams": []any{map[string]any{"name": "alpha", "url": s.backendURL, "timeout": "10s"}},
	}
}

// mcpURL is the replica's MCP endpoint, for legs that must hit this replica.
func (r *replica) mcpURL() string { return "http://" + r.mcpAddr + "/mcp" }

// start runs the gateway binary on the replica's configuration and waits until it is ready.
func (r *replica) start(t *testing.T) {
	t.Helper()
	p, err := startProcess(r.logPath, gatewayBinary, "serve", "--config", r.configPath)
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	r.proc = p
	if err := waitFor(readyTimeout, r.ready); err != nil {
		t.Fatalf("%s did not become ready: %v", r.name, err)
	}
}

// stop sends SIGTERM and waits for the drain to finish; the exit status must be success.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if r.proc == nil {
		return
	}
	p := r.proc
	r.proc = nil
	if err := p.stop(syscall.SIGTERM); err != nil {
		t.Errorf("%s after SIGTERM: %v", r.name, err)
	}
}

// readiness is the body of /readyz.
type readiness struct {
	Ready    bool              `json:"ready"`
	Draining bool              `json:"draining"`
	Checks   map[string]string `json:"checks"`
}

// readyz fetches the replica's /readyz.
func (r *replica) readyz() (int, readiness, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.adminAddr+"/readyz", nil)
	if err != nil {
		return 0, readiness{}, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, readiness{}, err
	}
	defer res.Body.Close()
	var rd readiness
	if err := json.NewDecoder(res.Body).Decode(&rd); err != nil {
		return res.StatusCode, rd, fmt.Errorf("/readyz body: %w", err)
	}
	return res.StatusCode, rd, nil
}

// ready returns nil once /readyz answers 200 and the process is still running.
func (r *replica) ready() error {
	if r.proc != nil && r.proc.exited() {
		return fmt.Errorf("%s exited: %v", r.name, r.proc.err)
	}
	status, rd, err := r.readyz()
	switch {
	case err != nil:
		return err
	case status != http.StatusOK || !rd.Ready:
		return fmt.Errorf("/readyz %d %+v", status, rd)
	}
	return nil
}
