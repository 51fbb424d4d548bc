package gateway

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreflightSharedByServe: check-config and serve refuse a configuration with the same
// errors, all of them in one pass, and serve does so before it binds a port (the port it is
// given is taken, so reaching the bind would fail differently).
func TestPreflightSharedByServe(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	yaml := "log: { level: verbose }\n" +
		"server:\n  listen: " + taken.Addr().String() + "\n" +
		"  tls: { certFile: " + filepath.Join(dir, "missing.crt") + ", keyFile: " + filepath.Join(dir, "missing.key") + " }\n" +
		"upstreams:\n- name: a\n  url: http://127.0.0.1:1/mcp\n  headers: { X-Key: { env: UNSET_KEY } }\n" +
		"auth: { disabled: true }\n"
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{`log.level "verbose"`, "server.tls", "missing.crt", "upstreams[0].headers.X-Key", "UNSET_KEY"}
	getenv := func(string) string { return "" }
	var out, errOut bytes.Buffer
	checkErr := Run(context.Background(), "test", []string{"check-config", "--config", file}, getenv, &out, &errOut)
	serveErr := Run(context.Background(), "test", []string{"serve", "--config", file}, getenv, &out, &errOut)
	for name, err := range map[string]error{"check-config": checkErr, "serve": serveErr} {
		if err == nil {
			t.Fatalf("%s accepted the configuration", name)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", name, w, err)
			}
		}
		if strings.Contains(err.Error(), "address already in use") {
			t.Errorf("%s reached the bind: %v", name, err)
		}
	}
	if checkErr.Error() != serveErr.Error() {
		t.Errorf("check-config and serve disagree:\ncheck-config: %v\nserve: %v", checkErr, serveErr)
	}
}

// loadStatic loads a configuration as check-config --static checks it: the file, environment and
// flags, without reading the files and variables it names (examples name files of another
// machine).
func loadStatic(args []string) (*Config, error) {
	noEnv := func(string) string { return "" }
	cfg, err := readConfig("check-config", args, noEnv, io.Discard)
	if err != nil {
		return nil, err
	}
	return cfg, cfg.check(noEnv, false)
}
