package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// options is the command line.
type options struct {
	modules, out, node string
	files              int
}

// call is one tools/call to make.
type call struct {
	tool string
	args map[string]any
}

// record is one line of the corpus.
type record struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments map[string]any  `json:"arguments"`
	Result    json.RawMessage `json:"result"`
}

// server is one reference server: its npm binary, its arguments and the calls made to it.
type server struct {
	name  string
	bin   string
	args  []string
	env   []string
	calls []call
}

// run exports the repository, builds every server's calls and records their results.
func run(o options) error {
	// The servers run in a scratch directory: paths given relative to this one must hold there.
	var err error
	if o.node, err = exec.LookPath(o.node); err != nil {
		return err
	}
	if o.node, err = filepath.Abs(o.node); err != nil {
		return err
	}
	if o.modules, err = filepath.Abs(o.modules); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "resultcorpus")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "repo")
	if err := exportRepo(repo); err != nil {
		return err
	}
	fsCalls, err := filesystemCalls(repo, o.files)
	if err != nil {
		return err
	}
	memCalls, err := memoryCalls(repo)
	if err != nil {
		return err
	}
	servers := []server{
		{name: "filesystem", bin: "mcp-server-filesystem", args: []string{repo}, calls: fsCalls},
		{name: "memory", bin: "mcp-server-memory", env: []string{"MEMORY_FILE_PATH=" + filepath.Join(tmp, "memory.jsonl")}, calls: memCalls},
		{name: "everything", bin: "mcp-server-everything", args: []string{"stdio"}, calls: everythingCalls()},
		{name: "sequential-thinking", bin: "mcp-server-sequential-thinking", env: []string{"DISABLE_THOUGHT_LOGGING=true"}, calls: thinkingCalls()},
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	for _, s := range servers {
		if err := record1(o, s, repo, tmp); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// exportRepo writes the committed tree of HEAD to dir.
func exportRepo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", "HEAD")
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	return untar.Wait()
}

// record1 runs one server, makes its calls in order and writes their results to <out>/<name>.jsonl.
func record1(o options, s server, repo, tmp string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	script := filepath.Join(o.modules, ".bin", s.bin)
	cmd := exec.CommandContext(ctx, o.node, append([]string{script}, s.args...)...)
	cmd.Dir = tmp
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + tmp}, s.env...)
	client := mcp.NewClient(&mcp.Implementation{Name: "resultcorpus", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer session.Close()
	var out bytes.Buffer
	for _, c := range s.calls {
		if c.args == nil {
			c.args = map[string]any{}
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			return fmt.Errorf("%s: %w", c.tool, err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return err
		}
		line, err := json.Marshal(record{Server: s.name, Tool: c.tool, Arguments: c.args, Result: raw})
		if err != nil {
			return err
		}
		out.Write(anonymise(line, repo, tmp))
		out.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(o.out, s.name+".jsonl"), out.Bytes(), 0o644)
}

// anonymise writes the export's directory as /repo and the scratch directory as /tmp/corpus,
// plain and JSON-escaped to the depth of JSON held in a string held in the line.
func anonymise(line []byte, repo, tmp string) []byte {
	s := string(line)
	for _, p := range [][2]string{{repo, "/repo"}, {tmp, "/tmp/corpus"}} {
		from, to := p[0], p[1]
		for range 3 {
			s = strings.ReplaceAll(s, from, to)
			from, to = escape(from), escape(to)
		}
	}
	return []byte(s)
}

// escape is s as it stands inside a JSON string.
func escape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
