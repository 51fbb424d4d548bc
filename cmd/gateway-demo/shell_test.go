package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lineTimeout bounds one pasted command, generous for a busy machine.
const lineTimeout = 2 * time.Minute

// shell is one bash process the test pastes commands into, one after another, as a user
// pastes the banner's lines into a terminal: functions and variables carry over.
type shell struct {
	stdin io.WriteCloser
	lines chan string
	n     int
}

// startShell starts bash without profile or rc files, in a temporary directory and home, with
// stderr folded into stdout as a terminal shows both.
func startShell(t *testing.T) *shell {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LC_ALL=C"}
	cmd.SysProcAttr = demoProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("bash: %v", err)
	}
	sh := &shell{stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		defer close(sh.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if _, err := io.WriteString(stdin, "exec 2>&1\n"); err != nil {
		t.Fatal(err)
	}
	return sh
}

// run pastes command and returns everything it printed.
func (sh *shell) run(t *testing.T, command string) string {
	t.Helper()
	sh.n++
	mark := fmt.Sprintf("--- end of command %d ---", sh.n)
	// The mark follows a newline of its own: a command's output need not end with one.
	if _, err := fmt.Fprintf(sh.stdin, "%s\nprintf '\\n%%s\\n' '%s'\n", command, mark); err != nil {
		t.Fatalf("writing to bash: %v", err)
	}
	var out []string
	timeout := time.After(lineTimeout)
	for {
		select {
		case line, ok := <-sh.lines:
			if !ok {
				t.Fatalf("bash exited during %q; it printed:\n%s", command, strings.Join(out, "\n"))
			}
			if line == mark {
				return strings.TrimSuffix(strings.Join(out, "\n"), "\n")
			}
			out = append(out, line)
		case <-timeout:
			t.Fatalf("%q did not finish within %v; it printed:\n%s", command, lineTimeout, strings.Join(out, "\n"))
		}
	}
}

// commands splits pasted text into the commands bash reads: comment and blank lines are
// dropped, and a command continues while a line ends with a backslash or leaves a brace open
// (a function definition).
func commands(text string) []string {
	var out []string
	var cur []string
	depth := 0
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if len(cur) == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		cur = append(cur, line)
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if depth > 0 || strings.HasSuffix(line, `\`) {
			continue
		}
		out = append(out, strings.TrimSpace(strings.Join(cur, "\n")))
		cur, depth = nil, 0
	}
	return out
}

// httpResponse reads what `curl -i` printed: the status, the headers and the body.
func httpResponse(t *testing.T, out string) (int, http.Header, string) {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(out))
	status, err := r.ReadString('\n')
	f := strings.Fields(status)
	if err != nil || len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		t.Fatalf("not a curl -i response:\n%s", out)
	}
	code, _ := strconv.Atoi(f[1])
	hdr, err := textproto.NewReader(r).ReadMIMEHeader()
	if err != nil {
		t.Fatalf("headers: %v\n%s", err, out)
	}
	body, _ := io.ReadAll(r)
	return code, http.Header(hdr), strings.TrimSpace(string(body))
}
