package gateway

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// urlCanary is put in every configured URL's user information and query values and fragment,
// and in its path where a credential is (after a webhook's name, or as a generated token with
// pathToken): where it shows, a credential would.
const (
	urlCanary = "CANARY7e1d"
	pathToken = "Zt3Lm9Rw2P"
)

// urlSetting is one setting that holds a URL: its key path, the start of the key path a message
// about it names, and the configuration (after reloadBase) that sets it to a URL.
type urlSetting struct {
	key  string
	yaml func(url string) string
}

// urlSettings are all the settings holding a URL an operator may key with credentials.
func urlSettings(t *testing.T) []urlSetting {
	closed := "http://" + closedPort(t) + "/mcp"
	noAuth := "auth: {disabled: true}\n"
	backend := "upstreams:\n  - {name: a, url: \"" + closed + "\", timeout: 1s, connectTimeout: 1s}\n"
	issuer := func(iss, jwks string) string {
		return "auth:\n  issuers: [{issuer: \"" + iss + "\"" + jwks + ", audiences: [" + testResource + "]}]\n" +
			"  policy: {rules: [{id: all, issuers: [\"*\"]}]}\n"
	}
	return []urlSetting{
		{"auth.issuers[0].issuer", func(u string) string { return issuer(u, "") + backend }},
		{"auth.issuers[0]", func(u string) string {
			return issuer("http://"+closedPort(t), ", jwksURL: \""+u+"\"") + backend
		}},
		{"upstreams[0]", func(u string) string {
			return noAuth + "upstreams:\n  - {name: a, url: \"" + u + "\", timeout: 1s, connectTimeout: 1s}\n"
		}},
		{"upstreams[0].auth", func(u string) string {
			return noAuth + "upstreams:\n  - {name: a, url: \"" + closed + "\", timeout: 1s, connectTimeout: 1s, auth: {type: tokenExchange, tokenURL: \"" + u +
				"\", clientID: gw, clientSecret: {value: s}}}\n"
		}},
		{"upstreams[0].auth", func(u string) string {
			return issuer("http://"+closedPort(t), "") + "userOAuth: {keys: [{id: v1, secret: {value: " + strings.Repeat("v", 32) + "}}]}\n" +
				"upstreams:\n  - {name: a, url: \"" + closed + "\", timeout: 1s, auth: {type: userOAuth, clientID: c, authServer: \"" + u + "\"}}\n"
		}},
		{"interceptors[0]", func(u string) string {
			return noAuth + backend + "interceptors:\n  - {name: hook, url: \"" + u + "\", type: validation, interceptor: guard, timeout: 1s, webhook: true, rules: [{tools: [\"*\"]}]}\n"
		}},
		{"search.embeddings", func(u string) string {
			return noAuth + backend + "search:\n  embeddings: {url: \"" + u + "\", model: m}\n"
		}},
		{"tracing", func(u string) string {
			return noAuth + backend + "tracing: {endpoint: \"" + u + "\", insecure: true}\n"
		}},
		{"redis", func(u string) string {
			return noAuth + backend + "redis: {url: \"" + strings.Replace(u, "http://", "redis://", 1) + "\"}\n"
		}},
	}
}

// canaryURLs are the URLs each setting is tried with: one that does not parse (an invalid port),
// which a check quotes in its error, and ones to a closed loopback port, which a client's error
// repeats when it cannot connect; the canary in their paths is a webhook's token and a
// capability URL's.
func canaryURLs(t *testing.T) []string {
	return []string{
		"http://u" + urlCanary + ":" + urlCanary + "@127.0.0.1:bad/hooks/" + urlCanary + "?key=" + urlCanary + "&sig=" + urlCanary + "#" + urlCanary,
		"http://u" + urlCanary + ":" + urlCanary + "@" + closedPort(t) + "/s/" + urlCanary + pathToken + "/mcp?access_token=" + urlCanary + "#" + urlCanary,
		"http://" + closedPort(t) + "/p?key=" + urlCanary,
	}
}

// TestConfiguredURLsRedacted: no configured URL's user information, query value, fragment or
// secret path segment shows in what the gateway prints or logs about its configuration, whichever setting holds the
// URL, on every path a configuration is read: check-config (and --online against a closed
// loopback port), serve's start, the --upstream flag and a SIGHUP reload through the real
// reload path; the setting's key path still shows, and the URL's host.
func TestConfiguredURLsRedacted(t *testing.T) {
	header := fmt.Sprintf(reloadBase, "1s")
	f := startReloadGateway(t, "1s", "auth: {disabled: true}\nupstreams:\n  - {name: a, url: \"http://"+closedPort(t)+"/mcp\", timeout: 1s}\n")
	dir := t.TempDir()
	check := func(t *testing.T, what, key, out string) {
		t.Helper()
		if strings.Contains(out, urlCanary) {
			t.Errorf("%s shows the canary:\n%s", what, out)
		}
		if key != "" && !strings.Contains(out, key) {
			t.Errorf("%s does not name %s:\n%s", what, key, out)
		}
	}
	for i, s := range urlSettings(t) {
		for j, u := range canaryURLs(t) {
			t.Run(fmt.Sprintf("%s/%d/%d", s.key, i, j), func(t *testing.T) {
				file := filepath.Join(dir, fmt.Sprintf("c%d-%d.yaml", i, j))
				if err := os.WriteFile(file, []byte(header+s.yaml(u)), 0o600); err != nil {
					t.Fatal(err)
				}
				getenv := func(string) string { return "" }
				for _, args := range [][]string{{"check-config", "--config", file}, {"check-config", "--static", "--config", file}, {"check-config", "--online", "--config", file}} {
					var stdout, stderr bytes.Buffer
					code := Main(context.Background(), "test", args, getenv, &stdout, &stderr)
					if code == 0 && args[1] == "--online" {
						t.Errorf("%v reached a closed port:\n%s", args, stdout.String())
					}
					key := s.key
					if code == 0 {
						key = "" // a URL that parses passes the offline checks
					}
					check(t, strings.Join(args[:len(args)-2], " "), key, stdout.String()+stderr.String())
				}
				// serve refuses the file before it binds (an invalid URL), or starts and is
				// stopped at once; either way its log and error are checked.
				var logs bytes.Buffer
				cfg, err := loadConfig("serve", []string{"--config", file}, getenv, &logs)
				if err == nil {
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					err = run(ctx, cfg, runOptions{getenv: getenv, stderr: &logs})
				}
				if err != nil {
					check(t, "serve's error", "", err.Error())
				}
				check(t, "serve's log", "", logs.String())
				before := len(f.logs.String())
				if err := f.reload(t, "1s", s.yaml(u)); err != nil {
					check(t, "the refused reload's error", "", err.Error())
				}
				check(t, "the reload's log", "", f.logs.String()[before:])
			})
		}
	}
	// NAME=URL, given to --upstream: without its name, the whole is quoted; with a URL that does
	// not parse, the URL is.
	for spec, key := range map[string]string{
		"http://u:" + urlCanary + "@127.0.0.1:1/p?" + urlCanary:                           "127.0.0.1:1/p?REDACTED",
		"a=http://u:" + urlCanary + "@127.0.0.1:bad/p?key=" + urlCanary + "#" + urlCanary: "upstreams[0].url",
	} {
		var stdout, stderr bytes.Buffer
		if Main(context.Background(), "test", []string{"check-config", "--upstream", spec}, func(string) string { return "" }, &stdout, &stderr) == 0 {
			t.Errorf("--upstream %s accepted", spec)
		}
		check(t, "--upstream", key, stderr.String())
	}
}
