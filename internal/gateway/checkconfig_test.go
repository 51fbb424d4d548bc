package gateway

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	want := []string{`config.yaml:1: log.level: "verbose": want debug`, "config.yaml:4: server.tls.certFile: ", "missing.crt: no such file or directory: want a readable file",
		"config.yaml:4: server.tls.keyFile: ", "missing.key",
		"config.yaml:8: upstreams[0].headers.X-Key: environment variable UNSET_KEY is empty or unset"}
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
	return cfg, cfg.check(noEnv, checkSettings)
}

// TestConfigFileErrors: problems in the file name the file, line and key path and say what was
// expected, in the file's terms, never Go's (no type names, no YAML tags), and never quote the
// value, which may be a secret.
func TestConfigFileErrors(t *testing.T) {
	const secret = "Bearer s3cr3t-Value-0123456789"
	yaml := "upstreams:\n  name: github\n  url: http://127.0.0.1:1/mcp\n" +
		"tracing:\n  endpoint: https://otel.example.com\n  headers:\n    Authorization: " + secret + "\n" +
		"mrtr: {keys: [{id: k1, secret: " + secret + "}]}\n"
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runMain([]string{"check-config", "--config", file}, nil)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		file + ":2: upstreams: expected a list (one \"- \" entry per line, or [a, b]), got a mapping",
		file + ":7: tracing.headers.Authorization: expected a secret: {file: PATH}, {env: NAME} or (for development) {value: …}, got a string",
		file + ":8: mrtr.keys[0].secret: expected a secret",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("output lacks %q:\n%s", want, errOut)
		}
	}
	for _, leak := range []string{"s3cr3t", "Bearer", "!!", "unmarshal"} {
		if strings.Contains(errOut, leak) {
			t.Errorf("output contains %q:\n%s", leak, errOut)
		}
	}
	if m := regexp.MustCompile(`\b(gateway|config|upstreams|authz|mcphttp|store|pins|time)\.[A-Z]\w*|\[\][a-zA-Z]`).FindString(errOut); m != "" {
		t.Errorf("output names the Go type %s:\n%s", m, errOut)
	}
}

// TestFlagUpstreamNotLocatedInFile: a problem with a backend given by --upstream or
// MCPGW_UPSTREAMS is not put at a line of the file (the file's list of backends is elsewhere),
// and says where the backend came from.
func TestFlagUpstreamNotLocatedInFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "server: {listen: \"127.0.0.1:0\"}\nauth: {disabled: true}\nupstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"flag": {args: []string{"--upstream", "a=http://127.0.0.1:2/mcp"}},
		"env":  {env: map[string]string{"MCPGW_UPSTREAMS": "b=http://127.0.0.1:2/mcp, a=http://127.0.0.1:3/mcp"}},
	} {
		code, _, errOut := runMain(append([]string{"check-config", "--config", file}, run.args...), run.env)
		if code != 1 {
			t.Fatalf("%s: exit %d\n%s", name, code, errOut)
		}
		if strings.Contains(errOut, "config.yaml:") {
			t.Errorf("%s: the problem is put at a line of the file:\n%s", name, errOut)
		}
		if !strings.Contains(errOut, "given by --upstream or MCPGW_UPSTREAMS") {
			t.Errorf("%s: the error does not say where the backend came from:\n%s", name, errOut)
		}
	}
}

// TestEveryMalformedUpstreamReported: each --upstream or MCPGW_UPSTREAMS entry that is not
// NAME=URL is reported in the same pass, not only the first, each under the flag or variable
// that gave it.
func TestEveryMalformedUpstreamReported(t *testing.T) {
	for name, run := range map[string]struct {
		args []string
		env  map[string]string
		by   string
	}{
		"flag": {args: []string{"--upstream", "first", "--upstream", "a=http://127.0.0.1:1/mcp", "--upstream", "=second",
			"--upstream", "third="}, by: "--upstream"},
		"env": {env: map[string]string{"MCPGW_UPSTREAMS": "first, a=http://127.0.0.1:1/mcp, =second,third="}, by: "MCPGW_UPSTREAMS"},
	} {
		code, _, errOut := runMain(append([]string{"check-config", "--no-auth", "--listen", "127.0.0.1:0"}, run.args...), run.env)
		if code != 1 {
			t.Fatalf("%s: exit %d\n%s", name, code, errOut)
		}
		for _, bad := range []string{"first", "=second", "third="} {
			if want := run.by + ": upstream " + strconv.Quote(bad) + ": want NAME=URL"; !strings.Contains(errOut, want) {
				t.Errorf("%s: output lacks %q:\n%s", name, want, errOut)
			}
		}
	}
}

// TestOverriddenSettingNotLocatedInFile: a problem with a setting an MCPGW_* variable or a flag
// replaced is not put at the line of the file, whose value there is not the one checked, and
// says which variable or flag set it; the file's own problems keep their lines.
func TestOverriddenSettingNotLocatedInFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "server: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: loud}\nauth: {disabled: true}\n" +
		"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runMain([]string{"check-config", "--config", file, "--log-level", "verbose", "--no-auth", "--listen", "0.0.0.0:0"},
		map[string]string{"MCPGW_ADMIN_LISTEN": "nowhere"})
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"\nadmin.listen: \"nowhere\": want host:port or :port (missing port in address) (set by MCPGW_ADMIN_LISTEN)\n",
		"\nlog.level: \"verbose\": want debug, info, warn or error (set by --log-level)\n",
		"\nauth.disabled: refused on the non-loopback listener \"0.0.0.0:0\" without --force: every caller could call every tool (set by --no-auth)\n",
		"config.yaml:2: log.format: \"loud\": want json or text\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("output lacks %q:\n%s", want, errOut)
		}
	}
}
