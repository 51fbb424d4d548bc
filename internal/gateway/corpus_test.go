package gateway

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
)

// corpusDir holds the configurations check-config and serve are tried on: NN-*.txt are broken,
// each with the errors it must produce; good-*.txt must be accepted.
const corpusDir = "testdata/badconfig"

// leakMarker is in every secret value of the corpus: no output may contain it.
const leakMarker = "s3cr3t"

// corpusCase is one file of the corpus: header lines (what:, want:, not:, out:, env:) and then files, each
// after a "-- name --" line. $DIR in a file or a variable stands for the directory the case is
// written to, which also holds the shared fixtures (fixture/: a CA, a server certificate and
// key, a 32-byte key, a token, a lock file pinning backend a).
type corpusCase struct {
	name, what string
	want, not  []string
	out        []string // what check-config prints of a good one
	env        map[string]string
	files      map[string]string
}

func (c corpusCase) broken() bool { return !strings.HasPrefix(c.name, "good-") }

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	sort.Strings(paths)
	var out []corpusCase
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parseCorpusCase(t, strings.TrimSuffix(filepath.Base(p), ".txt"), string(raw)))
	}
	return out
}

func parseCorpusCase(t *testing.T, name, raw string) corpusCase {
	t.Helper()
	c := corpusCase{name: name, env: map[string]string{}, files: map[string]string{}}
	file := ""
	for _, line := range strings.SplitAfter(raw, "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimSpace(line), " --") {
			file = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "-- "), " --")
			c.files[file] = ""
			continue
		}
		if file != "" {
			c.files[file] += line
			continue
		}
		key, val, _ := strings.Cut(strings.TrimRight(line, "\n"), ": ")
		switch key {
		case "what":
			c.what = val
		case "want":
			c.want = append(c.want, val)
		case "not":
			c.not = append(c.not, val)
		case "out":
			c.out = append(c.out, val)
		case "env":
			k, v, _ := strings.Cut(val, "=")
			c.env[k] = v
		case "":
		default:
			t.Fatalf("%s: unknown header line %q", name, line)
		}
	}
	if _, ok := c.files["config.yaml"]; !ok || c.what == "" || c.broken() != (len(c.want) > 0) {
		t.Fatalf("%s: want a what: line, a config.yaml, and want: lines exactly when the case is broken", name)
	}
	return c
}

// write lays the case out in a new directory with the fixtures and returns the configuration's
// path and the case's environment.
func (c corpusCase) write(t *testing.T) (string, func(string) string) {
	t.Helper()
	dir := t.TempDir()
	writeCorpusFixtures(t, filepath.Join(dir, "fixture"))
	for name, content := range c.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(content, "$DIR", dir)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{}
	for k, v := range c.env {
		env[k] = strings.ReplaceAll(v, "$DIR", dir)
	}
	return filepath.Join(dir, "config.yaml"), func(k string) string { return env[k] }
}

func writeCorpusFixtures(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca := certtest.NewCA(t)
	pair := ca.Issue(t, certtest.Leaf{})
	lock := pins.NewLock()
	lock.Backend("a")
	for name, content := range map[string][]byte{
		"ca.pem": ca.CertPEM(), "server.crt": pair.CertPEM, "server.key": pair.KeyPEM,
		"key32": []byte("0123456789abcdef0123456789abcdef\n"), "token": []byte("t0ken\n"), "lock.yaml": lock.Marshal(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrokenConfigCorpus runs check-config on every configuration of the corpus: each broken
// one fails with the errors it names, all of them in one pass, and no output repeats a secret;
// each good one passes. serve's steps before it binds a port (the same checks, then building
// every component and loading the certificate) refuse exactly the broken ones, with exactly
// check-config's errors. And every broken one is refused by what serve did before those checks
// existed too (reading, validating, building): check-config refuses nothing serve would start.
func TestBrokenConfigCorpus(t *testing.T) {
	cases := readCorpus(t)
	broken := 0
	for _, c := range cases {
		if c.broken() {
			broken++
		}
	}
	if broken < 30 {
		t.Fatalf("the corpus has %d broken configurations, want at least 30", broken)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file, getenv := c.write(t)
			var env = map[string]string{}
			for k := range c.env {
				env[k] = getenv(k)
			}
			code, stdout, stderr := runMain([]string{"check-config", "--config", file}, env)
			if strings.Contains(stdout+stderr, leakMarker) {
				t.Errorf("check-config prints a secret:\n%s%s", stdout, stderr)
			}
			serveErr := serveUntilBind(file, getenv, true)
			bareErr := serveUntilBind(file, getenv, false)
			if !c.broken() {
				if code != 0 || serveErr != nil || bareErr != nil {
					t.Fatalf("%s: refused: check-config exit %d\n%s\nserve: %v\nwithout the checks: %v", c.what, code, stderr, serveErr, bareErr)
				}
				for _, w := range c.out {
					if !strings.Contains(stdout, w) {
						t.Errorf("%s: check-config's summary lacks %q:\n%s", c.what, w, stdout)
					}
				}
				return
			}
			if code != 1 {
				t.Fatalf("%s: check-config exit %d, want 1\n%s", c.what, code, stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%s: check-config's errors lack %q:\n%s", c.what, w, stderr)
				}
			}
			for _, w := range c.not {
				if strings.Contains(stderr, w) {
					t.Errorf("%s: check-config's errors name %q:\n%s", c.what, w, stderr)
				}
			}
			if serveErr == nil {
				t.Fatalf("%s: serve accepts what check-config refuses", c.what)
			}
			if got := "gateway: " + serveErr.Error() + "\n"; got != stderr {
				t.Errorf("%s: serve's errors differ from check-config's:\nserve:\n%s\ncheck-config:\n%s", c.what, got, stderr)
			}
			if bareErr == nil {
				t.Errorf("%s: without the checks, serve would start: check-config refuses more than serve", c.what)
			}
		})
	}
}

// serveUntilBind runs what serve runs on the configuration file before it binds a port, and
// closes what it built. Without checks it runs what serve ran before preflight existed: the
// file read and validated on its own, then every component built and the certificate loaded.
func serveUntilBind(file string, getenv func(string) string, checks bool) error {
	cfg, err := readConfig("serve", []string{"--config", file}, getenv, io.Discard)
	if err != nil {
		return err
	}
	if checks {
		err = cfg.preflight(getenv)
	} else {
		err = cfg.check(getenv, checkSettings)
	}
	if err != nil {
		return err
	}
	g, _, err := prepare(cfg, getenv, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	g.close()
	return nil
}

// TestBrokenConfigCorpusBinary measures another build of the gateway on the corpus: with
// MCPGW_CORPUS_BINARY set to a gateway binary (an older release, say), it logs which broken
// configurations that binary's check-config accepts. Without it the test is skipped.
func TestBrokenConfigCorpusBinary(t *testing.T) {
	bin := os.Getenv("MCPGW_CORPUS_BINARY")
	if bin == "" {
		t.Skip("MCPGW_CORPUS_BINARY is not set")
	}
	var accepted []string
	broken := 0
	for _, c := range readCorpus(t) {
		if !c.broken() {
			continue
		}
		broken++
		file, getenv := c.write(t)
		cmd := exec.Command(bin, "check-config", "--config", file)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for k := range c.env {
			cmd.Env = append(cmd.Env, k+"="+getenv(k))
		}
		if out, err := cmd.CombinedOutput(); err == nil {
			accepted = append(accepted, c.name)
		} else if strings.Contains(string(out), leakMarker) {
			t.Logf("%s: prints a secret: %s", c.name, out)
		}
	}
	t.Logf("%s accepts %d of %d broken configurations: %s", bin, len(accepted), broken, strings.Join(accepted, ", "))
}
