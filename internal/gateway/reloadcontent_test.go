package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestReloadNamesRewrittenRestartOnlyFiles: a file that a setting only a restart changes reads,
// rewritten under the same name (a rotated Redis password, an MRTR key file replaced), is not
// read again by a reload, which compares the settings as written: the reload names each such
// setting as waiting for a restart and mcp_gateway_config_restart_required turns 1, as for a
// changed setting, rather than let the operator believe the new password or key serves. A
// reload with every file as it was names none, and nothing logged holds a secret.
func TestReloadNamesRewrittenRestartOnlyFiles(t *testing.T) {
	const (
		password, rotated = "s3cr3t-redis-password-1", "s3cr3t-redis-password-2"
		key, rekey        = "s3cr3t-key-0123456789abcdef0123456789", "s3cr3t-key-9876543210fedcba9876543210"
	)
	redis := testredis.Start(t, testredis.WithPassword(password))
	dir := t.TempDir()
	passwordFile, keyFile := writeSecretFile(t, dir, "redis-password", password), writeSecretFile(t, dir, "mrtr-key", key)
	alpha := mcptest.StartServer(t, "alpha")
	body := "redis: {url: \"redis://" + redis.Addr() + "\", password: {file: \"" + passwordFile + "\"}}\n" +
		"mrtr: {keys: [{id: k1, secret: {file: \"" + keyFile + "\"}}]}\n" +
		"auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
	f := startReloadGateway(t, "30s", body)

	if err := f.reload(t, "30s", body); err != nil {
		t.Fatalf("reload with nothing changed: %v", err)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_restart_required"); got != 0 {
		t.Fatalf("nothing changed, yet restart_required = %v", got)
	}

	writeSecretFile(t, dir, "redis-password", rotated)
	writeSecretFile(t, dir, "mrtr-key", rekey)
	if err := f.reload(t, "30s", body); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_restart_required"); got != 1 {
		t.Errorf("restart_required = %v, want 1: the rewritten files wait for a restart", got)
	}
	f.waitLog(t, `"settings":["mrtr.keys[0].secret (what it reads changed since the start)",`+
		`"redis.password (what it reads changed since the start)"]`)
	// The running store still has the password it started with: calls that need it go on.
	cs := mcptest.Connect(t, f.url())
	if names := toolNames(t, cs); len(names) == 0 {
		t.Errorf("no tools after the reload")
	}
	if strings.Contains(f.logs.String(), leakMarker) {
		t.Errorf("the log holds a secret:\n%s", f.logs.String())
	}

	// Put back as they were, the files no longer wait for a restart.
	writeSecretFile(t, dir, "redis-password", password)
	writeSecretFile(t, dir, "mrtr-key", key)
	if err := f.reload(t, "30s", body); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_restart_required"); got != 0 {
		t.Errorf("the files are as at the start, yet restart_required = %v", got)
	}
}

// TestRestartOnlyContentCoversEveryFile: each file a restart-only setting reads is digested,
// so that rewriting any one of them (and only it) is named: the Redis passwords and TLS files,
// the MRTR keys and the tracing headers.
func TestRestartOnlyContentCoversEveryFile(t *testing.T) {
	dir := t.TempDir()
	paths := []string{"redis.password", "redis.sentinelPassword", "redis.tls.caFile", "redis.tls.certFile",
		"redis.tls.keyFile", "mrtr.keys[0].secret", "tracing.headers.X-Key"}
	files := map[string]string{}
	for i, p := range paths {
		files[p] = writeSecretFile(t, dir, fmt.Sprint("f", i), "first "+p)
	}
	var cfg Config
	cfg.Redis.URL = "redis://127.0.0.1:1"
	cfg.Redis.Password, cfg.Redis.SentinelPassword = Secret{File: files["redis.password"]}, Secret{File: files["redis.sentinelPassword"]}
	cfg.Redis.TLS.CAFile, cfg.Redis.TLS.CertFile, cfg.Redis.TLS.KeyFile = files["redis.tls.caFile"], files["redis.tls.certFile"], files["redis.tls.keyFile"]
	cfg.MRTR.Keys = []KeyConfig{{ID: "k1", Secret: Secret{File: files["mrtr.keys[0].secret"]}}}
	cfg.Tracing.Endpoint = "http://127.0.0.1:1"
	cfg.Tracing.Headers = map[string]Secret{"X-Key": {File: files["tracing.headers.X-Key"]}}
	key := contentKey()
	getenv := func(string) string { return "" }
	start := restartOnlyContent(&cfg, getenv, key)
	if got := contentChanged(start, restartOnlyContent(&cfg, getenv, key), nil); len(got) != 0 {
		t.Fatalf("nothing rewritten, yet %v", got)
	}
	for i, p := range paths {
		writeSecretFile(t, dir, fmt.Sprint("f", i), "second "+p)
		got := contentChanged(start, restartOnlyContent(&cfg, getenv, key), nil)
		if want := []string{p + " (what it reads changed since the start)"}; !slices.Equal(got, want) {
			t.Errorf("%s rewritten: %v, want %v", p, got, want)
		}
		writeSecretFile(t, dir, fmt.Sprint("f", i), "first "+p)
	}
	// A block whose setting changed is named whole: its files are not named again.
	writeSecretFile(t, dir, "f0", "second")
	if got := contentChanged(start, restartOnlyContent(&cfg, getenv, key), []string{"redis"}); len(got) != 0 {
		t.Errorf("redis is named whole, yet %v", got)
	}
}

// TestConfigHashFollowsTheAppliedFile: mcp_gateway_config_hash is the first 48 bits of the
// SHA-256 of the file the running configuration was read from, as `sha256sum` prints it: at
// start-up, after a reload that applies another file, and unchanged by one that is refused, so
// that replicas can be compared with each other and with the file meant to serve.
func TestConfigHashFollowsTheAppliedFile(t *testing.T) {
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	f := startReloadGateway(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(alpha))
	want := func(what string) {
		t.Helper()
		b, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		prefix, err := strconv.ParseUint(hex.EncodeToString(sum[:6]), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := metricValue(t, f.gw, "mcp_gateway_config_hash"); got != float64(prefix) {
			t.Errorf("%s: mcp_gateway_config_hash = %v, want %d (the file's sha256 begins %x)", what, got, prefix, sum[:6])
		}
	}
	want("at start-up")
	if err := f.reload(t, "30s", "auth: {disabled: true}\nupstreams:\n"+upstreamYAML(beta)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	want("after a reload")
	applied := metricValue(t, f.gw, "mcp_gateway_config_hash")
	if err := f.reload(t, "30s", "auth: {disabled: true}\nupstreams: []\n"); err == nil {
		t.Fatal("a configuration without backends was applied")
	}
	if got := metricValue(t, f.gw, "mcp_gateway_config_hash"); got != applied {
		t.Errorf("a refused reload changed mcp_gateway_config_hash from %v to %v", applied, got)
	}
}
