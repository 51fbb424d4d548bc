package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestServeAcceptsDevIssuerTokens: the development issuer run as `gateway-demo issuer` beside
// `gateway serve` gives test tokens for a configuration of one's own. The configuration it
// prints, its policy rule included, completed with listeners and a backend, is served; the
// gateway becomes ready (it fetched the issuer's keys), lets the printed token list and call the
// backend's tools, and applies the printed rule to a token minted on request without the scope.
func TestServeAcceptsDevIssuerTokens(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	ports := freeport.Loopback(t, 2)
	mcpAddr, adminAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	publicURL := "http://" + mcpAddr + "/mcp"

	out := &mcptest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	issuerDone := make(chan error, 1)
	go func() {
		issuerDone <- devissuer.Command(ctx, []string{"--listen", "127.0.0.1:0", "--audience", publicURL,
			"--sub", "alice", "--scope", "tools:use"}, out, io.Discard)
	}()
	tokenLine := regexp.MustCompile(`export TOKEN='([^']+)'`)
	mcptest.WaitFor(t, "the issuer's token printed", func() bool { return tokenLine.MatchString(out.String()) })
	printed := out.String()
	token := tokenLine.FindStringSubmatch(printed)[1]

	// The printed configuration, as an operator pastes it, completed.
	snippet := printedConfig(t, printed)
	var cfg map[string]map[string]any
	if err := yaml.Unmarshal([]byte(snippet), &cfg); err != nil || cfg["auth"] == nil {
		t.Fatalf("the printed configuration %q: %v", snippet, err)
	}
	cfg["server"]["listen"], cfg["server"]["drainDelay"] = mcpAddr, "0s"
	cfg["admin"] = map[string]any{"listen": adminAddr}
	doc := map[string]any{"server": cfg["server"], "admin": cfg["admin"], "auth": cfg["auth"],
		"upstreams": []any{map[string]any{"name": "alpha", "url": alpha.URL()}}}
	file := writeYAML(t, t.TempDir(), "config.yaml", doc)

	serveDone := make(chan error, 1)
	go func() {
		serveDone <- Run(ctx, "test", []string{"serve", "--config", file}, func(string) string { return "" }, io.Discard, io.Discard)
	}()
	mcptest.WaitFor(t, "the gateway ready", func() bool {
		return readyzOK(http.DefaultClient, "http://"+adminAddr+"/readyz") == nil
	})

	cs := mcptest.Connect(t, publicURL, mcptest.WithBearer(token))
	if names := toolNames(t, cs); !slices.Contains(names, "alpha__echo") {
		t.Fatalf("the printed token lists %v", names)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "dev"}}); err != nil || res.IsError {
		t.Fatalf("a call with the printed token: %v %+v", err, res)
	}
	issuer := regexp.MustCompile(`(?m)^issuer +(\S+)`).FindStringSubmatch(printed)[1]
	res, err := http.PostForm(issuer+"/mint", url.Values{"sub": {"bob"}})
	if err != nil {
		t.Fatal(err)
	}
	var minted struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(res.Body).Decode(&minted)
	res.Body.Close()
	if err != nil || minted.AccessToken == "" {
		t.Fatalf("mint: %v", err)
	}
	if names := toolNames(t, mcptest.Connect(t, publicURL, mcptest.WithBearer(minted.AccessToken))); len(names) != 0 {
		t.Fatalf("a token without tools:use lists %v", names)
	}

	cancel()
	for name, done := range map[string]chan error{"serve": serveDone, "issuer": issuerDone} {
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// printedConfig is the configuration the development issuer prints for the gateway: the
// indented block after "Trust it in the gateway's configuration", dedented.
func printedConfig(t *testing.T, printed string) string {
	t.Helper()
	_, rest, ok := strings.Cut(printed, "Trust it in the gateway's configuration")
	_, rest, _ = strings.Cut(rest, "\n\n")
	block, _, _ := strings.Cut(rest, "\n\n")
	if !ok || !strings.HasPrefix(block, "  server:") {
		t.Fatalf("the issuer prints no configuration block:\n%s", printed)
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestReadmeIssuerCommand: the README's development-issuer command line runs as printed (its
// flags exist), the address it documents is the command's default, the configuration the README
// shows is the one it prints (at that address), and the fields of its mint example are
// accepted.
func TestReadmeIssuerCommand(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	line := regexp.MustCompile(`(?m)^go run \./cmd/gateway-demo issuer (.*)$`).FindStringSubmatch(readme)
	if line == nil {
		t.Fatal("the README has no gateway-demo issuer command line")
	}
	args := shellWords(t, line[1])
	if i := slices.Index(args, "--listen"); i < 0 || args[i+1] != devissuer.CommandAddr {
		t.Fatalf("the README's command does not listen on the default %s: %v", devissuer.CommandAddr, args)
	} else {
		args[i+1] = "127.0.0.1:0" // the documented port may be taken on a test machine
	}
	out := runReadmeIssuer(t, args)
	issuer := regexp.MustCompile(`(?m)^issuer +(\S+)`).FindStringSubmatch(out.String())[1]
	want := strings.ReplaceAll(printedConfig(t, out.String()), issuer, "http://"+devissuer.CommandAddr)
	if !strings.Contains(readme, "The command above prints:\n\n```yaml\n"+want+"```\n") {
		t.Errorf("the README does not show the configuration its issuer command prints:\n%s", want)
	}
	curl := regexp.MustCompile("curl -s http://" + regexp.QuoteMeta(devissuer.CommandAddr) + `/mint((?: -d \S+)+)`).FindStringSubmatch(readme)
	if curl == nil {
		t.Fatal("the README has no mint example")
	}
	form := url.Values{}
	for _, kv := range regexp.MustCompile(`-d (\S+)`).FindAllStringSubmatch(curl[1], -1) {
		k, v, _ := strings.Cut(kv[1], "=")
		form.Set(k, v)
	}
	res, err := http.PostForm(issuer+"/mint", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || len(form) != 4 {
		t.Fatalf("the README's mint example %v: %d", form, res.StatusCode)
	}
}

// runReadmeIssuer runs the dev issuer with the README's args until the test ends and waits
// for it to print a token (or to stop); it returns what it printed.
func runReadmeIssuer(t *testing.T, args []string) *mcptest.LogBuffer {
	t.Helper()
	out := &mcptest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- devissuer.Command(ctx, args, out, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the README's command: %v", err)
		}
	})
	mcptest.WaitFor(t, "the README's command printing a token", func() bool {
		return strings.Contains(out.String(), "export TOKEN='") || len(done) > 0
	})
	return out
}

// shellWords splits a command line the way a POSIX shell does for plain words and single or
// double quotes (no escapes or expansions: the README's lines need none).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestReadmeIssuerSignInCommand: the README's development-issuer command for the approval page
// (the one with --client) runs as printed, and a configuration with the approval block it
// prints passes check-config --online's sign-in check: the issuer's discovery names the
// authorization and token endpoints the page signs users in with.
func TestReadmeIssuerSignInCommand(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^go run \./cmd/gateway-demo issuer (.* --client .*)$`).FindStringSubmatch(string(raw))
	if line == nil {
		t.Fatal("the README has no gateway-demo issuer command line with --client")
	}
	args := shellWords(t, line[1])
	i := slices.Index(args, "--listen")
	j := slices.Index(args, "--audience")
	if i < 0 || j < 0 {
		t.Fatalf("the README's command names no --listen or --audience: %v", args)
	}
	args[i+1] = "127.0.0.1:0" // the documented port may be taken on a test machine
	out := runReadmeIssuer(t, args)
	printed := out.String()
	issuer := regexp.MustCompile(`(?m)^issuer +(\S+)`).FindStringSubmatch(printed)
	client := regexp.MustCompile(`(?m)^  approval:\n    clientID: (\S+)$`).FindStringSubmatch(printed)
	if issuer == nil || client == nil {
		t.Fatalf("the command prints no issuer or no approval block:\n%s", printed)
	}
	ports := freeport.Loopback(t, 2)
	doc := map[string]any{
		"server":    map[string]any{"listen": fmt.Sprintf("127.0.0.1:%d", ports[0]), "publicURL": args[j+1]},
		"admin":     map[string]any{"listen": fmt.Sprintf("127.0.0.1:%d", ports[1])},
		"auth":      map[string]any{"issuers": []any{map[string]any{"issuer": issuer[1]}}},
		"approval":  map[string]any{"clientID": client[1]},
		"upstreams": []any{map[string]any{"name": "alpha", "url": mcptest.StartServer(t, "alpha").URL()}},
	}
	file := writeYAML(t, t.TempDir(), "config.yaml", doc)
	code, stdout, stderr := runMain([]string{"check-config", "--config", file, "--online"}, nil)
	if code != 0 || !regexp.MustCompile(`(?m)^ok +approval\.issuer `).MatchString(stdout) {
		t.Fatalf("check-config --online: exit %d\n%s%s", code, stdout, stderr)
	}
}
