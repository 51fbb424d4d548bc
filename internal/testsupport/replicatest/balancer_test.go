package replicatest

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"
)

// Balancer settings.
const (
	// haproxyName is looked up in PATH first.
	haproxyName = "haproxy"
	// haproxyDebian is where Debian's haproxy package (installed by .ci/setup) puts it, often
	// outside a non-root PATH.
	haproxyDebian = "/usr/sbin/haproxy"
	// checkInterval is the health-check period; with fall 1 and rise 1 one failed or passed
	// check flips a replica, so drainDelay must exceed checkInterval plus the check timeout.
	checkInterval = 200 * time.Millisecond
	// servedByHeader names the replica that answered, added by the balancer.
	servedByHeader = "X-Served-By"
	// backendName is the HAProxy backend holding the replicas.
	backendName = "gateways"
)

// haproxyConfig is round-robin without affinity: each request is balanced on its own, whatever
// connection it came on. There are no layer-7 retries (no retry-on), so a request a draining
// replica drops is counted as lost rather than hidden by the balancer. In the foreground (-db)
// HAProxy writes its alerts and server state changes to stderr, the log file; per-request logs
// are left off.
var haproxyConfig = template.Must(template.New("haproxy").Parse(`global
    maxconn 512

defaults
    mode http
    option redispatch
    retries 2
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout check 500ms
    timeout http-keep-alive 10s

frontend mcp
    bind {{.Listen}}
    default_backend {{.Backend}}

frontend stats
    bind {{.Stats}}
    stats enable
    stats uri /stats
    stats refresh 0

backend {{.Backend}}
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    http-response set-header {{.Header}} %[srv_name]
{{- range .Servers}}
    server {{.Name}} {{.Addr}} check port {{.AdminPort}} inter {{$.Inter}} fall 1 rise 1
{{- end}}
`))

// balancerServer is one replica as HAProxy sees it.
type balancerServer struct {
	Name, Addr string
	AdminPort  int
}

// balancer is a running HAProxy in the foreground.
type balancer struct {
	addr, statsAddr string
	logPath         string
	proc            *process
}

// startBalancer renders the configuration into dir, runs HAProxy and waits until its stats page
// answers. It fails (never skips) when HAProxy is not installed.
func startBalancer(t *testing.T, dir string, port, statsPort int, servers []balancerServer) *balancer {
	t.Helper()
	bin, err := exec.LookPath(haproxyName)
	if err != nil {
		if bin, err = exec.LookPath(haproxyDebian); err != nil {
			t.Fatalf("haproxy is required (apt-get install haproxy; .ci/setup installs it): %v", err)
		}
	}
	b := &balancer{
		addr:      fmt.Sprintf("127.0.0.1:%d", port),
		statsAddr: fmt.Sprintf("127.0.0.1:%d", statsPort),
		logPath:   filepath.Join(dir, "haproxy.log"),
	}
	var cfg strings.Builder
	err = haproxyConfig.Execute(&cfg, map[string]any{
		"Listen": b.addr, "Stats": b.statsAddr, "Backend": backendName, "Header": servedByHeader,
		"Inter": fmt.Sprintf("%dms", checkInterval.Milliseconds()), "Servers": servers,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.proc, err = startProcess(b.logPath, bin, "-db", "-f", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A hard-stopped HAProxy exits non-zero by design; only a hang is an error here.
		if err := b.proc.stop(syscall.SIGTERM); errors.Is(err, errTimeout) {
			t.Errorf("haproxy: %v", err)
		}
		dumpLog(t, "haproxy", b.logPath)
	})
	if err := waitFor(readyTimeout, func() error { _, err := b.status(); return err }); err != nil {
		t.Fatalf("haproxy did not start: %v", err)
	}
	return b
}

// mcpURL is the MCP endpoint behind the balancer.
func (b *balancer) mcpURL() string { return "http://" + b.addr + "/mcp" }

// status returns each replica's state as HAProxy's stats page reports it ("UP", "DOWN", ...).
func (b *balancer) status() (map[string]string, error) {
	if b.proc.exited() {
		return nil, fmt.Errorf("haproxy exited: %v", b.proc.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.statsAddr+"/stats;csv", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	rows, err := csv.NewReader(res.Body).ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("stats csv: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimPrefix(h, "# ")] = i
	}
	out := map[string]string{}
	for _, r := range rows[1:] {
		if r[col["pxname"]] == backendName && r[col["svname"]] != "BACKEND" {
			out[r[col["svname"]]] = r[col["status"]]
		}
	}
	return out, nil
}

// waitState waits until HAProxy reports server in a state starting with want ("UP" also matches
// "UP 1/2" while a check is in transition).
func (b *balancer) waitState(server, want string) error {
	return waitFor(readyTimeout, func() error {
		st, err := b.status()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(st[server], want) {
			return fmt.Errorf("%s is %q, want %s", server, st[server], want)
		}
		return nil
	})
}
