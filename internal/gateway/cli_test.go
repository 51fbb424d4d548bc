package gateway

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// runMain runs the gateway command in-process as the binary would, returning its exit status
// and both outputs.
func runMain(args []string, env map[string]string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Main(context.Background(), "test", args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelpListsEveryCommand: `gateway --help`, `gateway -h` and `gateway help` print every
// sub-command on standard output and exit 0, and the README's list of sub-commands is the same.
func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, _ := runMain(args, nil)
		if code != 0 {
			t.Errorf("gateway %v: exit %d", args, code)
		}
		for _, name := range commandNames() {
			if !strings.Contains(out, "\n  "+name+" ") {
				t.Errorf("gateway %v does not list %s:\n%s", args, name, out)
			}
		}
		if strings.Contains(out, "-admin-listen") {
			t.Errorf("gateway %v prints serve's flags instead of the command list:\n%s", args, out)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The sentence starting "Sub-commands: " names each in backquotes.
	text := strings.Join(strings.Fields(string(readme)), " ")
	i := strings.Index(text, "Sub-commands: ")
	if i < 0 {
		t.Fatal("the README has no sentence starting with \"Sub-commands: \"")
	}
	line := text[i:]
	line = line[:strings.Index(line, ". ")]
	documented := map[string]bool{}
	for _, f := range strings.Split(line, "`")[1:] {
		if f != "" && !strings.ContainsAny(f, " ,.") {
			documented[f] = true
		}
	}
	for _, name := range commandNames() {
		if !documented[name] {
			t.Errorf("the README's %q does not name %s", line, name)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("the README names sub-command %s, which the gateway does not have", name)
	}
}

// TestCommandHelp: each command's --help (and `gateway help <command>`) prints that command's
// own usage and flags on standard output and exits 0, not serve's.
func TestCommandHelp(t *testing.T) {
	tests := []struct {
		args        []string
		want, wrong []string
	}{
		{[]string{"serve", "--help"}, []string{"usage: gateway serve", "-listen", "-config", "MCPGW_NO_AUTH"}, []string{"-static", "-online"}},
		{[]string{"check-config", "--help"}, []string{"usage: gateway check-config", "-static", "-online", "-config"}, []string{"usage: gateway serve"}},
		{[]string{"check-config", "-h"}, []string{"usage: gateway check-config", "-online"}, nil},
		{[]string{"help", "check-config"}, []string{"usage: gateway check-config", "-online"}, nil},
		{[]string{"version", "--help"}, []string{"usage: gateway version"}, []string{"-listen"}},
		{[]string{"help", "version"}, []string{"usage: gateway version"}, []string{"-listen"}},
		{[]string{"pins", "--help"}, []string{"usage: gateway pins <write|diff|approve|reseal>"}, []string{"-listen"}},
		{[]string{"pins", "write", "--help"}, []string{"usage: gateway pins write", "-out", "-config"}, []string{"-pins "}},
		{[]string{"pins", "diff", "-h"}, []string{"usage: gateway pins diff", "-pins", "-config"}, []string{"-out"}},
		{[]string{"help", "pins", "diff"}, []string{"usage: gateway pins diff", "-pins"}, nil},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(tt.args, nil)
		if code != 0 {
			t.Errorf("gateway %v: exit %d\n%s", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("gateway %v: standard output lacks %q:\n%s", tt.args, w, out)
			}
		}
		for _, w := range tt.wrong {
			if strings.Contains(out, w) {
				t.Errorf("gateway %v prints %q, which is not its own:\n%s", tt.args, w, out)
			}
		}
	}
	code, _, errOut := runMain([]string{"chek-config"}, nil)
	if code != 1 || !strings.Contains(errOut, `unknown command "chek-config" (did you mean "check-config"?)`) {
		t.Errorf("a misspelt command: exit %d\n%s", code, errOut)
	}
}

// TestBoolEnv: boolean variables take the usual spellings in any case, and anything else is
// refused with the spellings accepted, never read as false.
func TestBoolEnv(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want bool
	}{
		{"1", true}, {"true", true}, {"TRUE", true}, {"yes", true}, {"Yes", true}, {"on", true}, {"ON", true},
		{"0", false}, {"false", false}, {"no", false}, {"NO", false}, {"off", false}, {"Off", false},
	} {
		for _, name := range []string{"MCPGW_NO_AUTH", "MCPGW_NO_PREFIX"} {
			cfg, err := readConfig("check-config", []string{"--upstream", "a=http://127.0.0.1:1/mcp"},
				func(k string) string { return map[string]string{name: tt.v}[k] }, &bytes.Buffer{})
			if err != nil {
				t.Errorf("%s=%s: %v", name, tt.v, err)
				continue
			}
			got := cfg.Auth.Disabled
			if name == "MCPGW_NO_PREFIX" {
				got = cfg.Namespace.NoPrefix
			}
			if got != tt.want {
				t.Errorf("%s=%s read as %v", name, tt.v, got)
			}
		}
	}
	for _, v := range []string{"maybe", "y", "enabled", "2", "tru"} {
		code, _, errOut := runMain([]string{"check-config", "--upstream", "a=http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"},
			map[string]string{"MCPGW_NO_AUTH": v})
		if code == 0 || !strings.Contains(errOut, "MCPGW_NO_AUTH") || !strings.Contains(errOut, "want true, yes, on or 1, or false, no, off or 0") {
			t.Errorf("MCPGW_NO_AUTH=%s: exit %d\n%s", v, code, errOut)
		}
	}
}

// TestBuiltBinaryIgnored: the binaries `go build` leaves at the repository root, and bin/, are
// ignored by git, so they are never committed by accident.
func TestBuiltBinaryIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	for _, p := range []string{"gateway", "gateway-demo", "bin/gateway"} {
		if err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p).Run(); err != nil {
			t.Errorf("%s is not ignored by git: %v", p, err)
		}
	}
	for _, p := range []string{"cmd/gateway/main.go", "internal/gateway/cli.go"} {
		if err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p).Run(); err == nil {
			t.Errorf("%s is ignored by git", p)
		}
	}
}

// TestEveryCommandHelp: every command and every sub-command of pins, in each way of asking,
// prints its own usage on standard output and exits 0, before any check of its other flags.
func TestEveryCommandHelp(t *testing.T) {
	type ask struct {
		args  []string
		usage string
	}
	var asks []ask
	for _, c := range commands() {
		usage := "usage: gateway " + c.name
		if c.name == "help" {
			usage = "usage: gateway [command]"
		}
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			asks = append(asks, ask{args, usage})
		}
	}
	for _, sub := range pinsCommands() {
		usage := "usage: gateway pins " + sub
		asks = append(asks, ask{[]string{"pins", sub, "--help"}, usage}, ask{[]string{"help", "pins", sub}, usage})
	}
	// A flag's placeholder says what to give it (address, file, NAME): Go's fallbacks (string,
	// value, int, …, taken when the usage has no `word`) tell the reader nothing.
	generic := regexp.MustCompile(`(?m)^  -[a-z-]+ (string|value|int|uint|int64|uint64|float|duration)$`)
	for _, a := range asks {
		code, out, errOut := runMain(a.args, nil)
		if code != 0 || !strings.Contains(out, a.usage) {
			t.Errorf("gateway %v: exit %d, standard output lacks %q:\n%s%s", a.args, code, a.usage, out, errOut)
		}
		for _, m := range generic.FindAllString(out, -1) {
			t.Errorf("gateway %v: a flag without a placeholder of its own: %q", a.args, m)
		}
	}
}

// TestNoConfigurationHint: a newcomer who runs the gateway with no configuration at all is told
// how to give one, beside what is missing.
func TestNoConfigurationHint(t *testing.T) {
	for _, args := range [][]string{nil, {"serve"}, {"check-config"}} {
		code, _, errOut := runMain(args, nil)
		if code != 1 || !strings.Contains(errOut, "no configuration given: pass --config FILE") ||
			!strings.Contains(errOut, "upstreams: at least one upstream is required") {
			t.Errorf("gateway %v: exit %d\n%s", args, code, errOut)
		}
	}
	code, _, errOut := runMain([]string{"check-config", "--no-auth", "--listen", "127.0.0.1:0"}, nil)
	if code != 1 || strings.Contains(errOut, "no configuration given") {
		t.Errorf("with flags, the hint is not given: exit %d\n%s", code, errOut)
	}
}

// TestVersionFlag: --version, what a newcomer tries first, prints the version as the version
// command does, instead of refusing the flag and printing serve's usage.
func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, out, errOut := runMain(args, nil)
		if code != 0 || !strings.HasPrefix(out, "mcp-gateway ") {
			t.Errorf("gateway %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestCheckConfigSaysNothingIsAllowed: with authentication on and no rule that allows anything,
// every caller gets empty lists and "unknown tool", a configuration every check passes. The
// newcomer who trusts test tokens with the issuer block alone is told so by check-config, which
// stays silent about it when some rule allows or authentication is off (and then says that).
func TestCheckConfigSaysNothingIsAllowed(t *testing.T) {
	const base = "server: {publicURL: https://mcp.example.com/mcp}\n" +
		"auth:\n  issuers: [{issuer: https://idp.example.com}]\n"
	for _, tt := range []struct {
		name, yaml string
		args       []string
		want       bool
	}{
		{"no rules", base, nil, true},
		{"empty rules", base + "  policy: {rules: []}\n", nil, true},
		{"deny rules only", base + "  policy: {rules: [{id: d, effect: deny, tools: [\"admin_*\"]}]}\n", nil, true},
		{"an allow rule", base + "  policy: {rules: [{id: a, tools: [\"get_*\"]}]}\n", nil, false},
		{"an explicit allow rule", base + "  policy: {rules: [{id: d, effect: deny}, {id: a, effect: allow}]}\n", nil, false},
		{"no authentication", "{}\n", []string{"--no-auth"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"check-config", "--config", file, "--listen", "127.0.0.1:0", "--upstream", "a=http://127.0.0.1:1/mcp"}, tt.args...)
			code, out, errOut := runMain(args, nil)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if got := strings.Contains(out, "policy: no rule allows anything (auth.policy.rules)"); got != tt.want {
				t.Errorf("note printed: %v, want %v\n%s", got, tt.want, out)
			}
			// Without authentication the opposite holds, and is said instead.
			if got, want := strings.Contains(out, "authentication: OFF (auth.disabled)"), tt.args != nil; got != want {
				t.Errorf("authentication off said: %v, want %v\n%s", got, want, out)
			}
		})
	}
}

// TestServeWarnsNothingAllowed: serve, which a newcomer may run without check-config first, says
// the same at start-up when no rule allows anything, and not when one does.
func TestServeWarnsNothingAllowed(t *testing.T) {
	const note = "policy: no rule allows anything (auth.policy.rules)"
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	for _, rules := range [][]authz.RuleConfig{nil, {{ID: "read", Upstream: "alpha", Tools: []string{"echo"}}}} {
		logs := &mcptest.LogBuffer{}
		startTestGatewayTo(t, logs, func(c *Config) {
			c.Log.Level = "warn"
			trustIssuers(c, iss)
			c.Auth.Policy.Rules = rules
		}, alpha)
		// The log is written by a queue in order: the warning about the per-process sealing key,
		// logged later in start-up, comes after the one looked for.
		mcptest.WaitFor(t, "the start-up warnings", func() bool { return strings.Contains(logs.String(), "no mrtr.keys configured") })
		if got, want := strings.Contains(logs.String(), note), rules == nil; got != want {
			t.Errorf("rules %v: warned %v, want %v; the log:\n%s", rules, got, want, logs.String())
		}
	}
}

// TestHelpShowsDefaults: every flag of serve (and the commands sharing its flags) that sets a
// setting with a default says that default, the one the configuration applies, so the operator
// reading --help knows what leaving it out means.
func TestHelpShowsDefaults(t *testing.T) {
	c := newConfig()
	c.applyDefaults()
	_, out, _ := runMain([]string{"serve", "--help"}, nil)
	for flag, def := range map[string]string{
		"-listen": c.Server.Listen, "-admin-listen": c.Admin.Listen,
		"-log-level": c.Log.Level, "-log-format": c.Log.Format,
	} {
		m := regexp.MustCompile(`(?m)^  ` + flag + ` \S+\n\s+(.*)$`).FindStringSubmatch(out)
		if m == nil || !strings.Contains(m[1], "(default "+def+")") {
			t.Errorf("serve --help: %s does not say its default %s:\n%s", flag, def, out)
		}
	}
}
