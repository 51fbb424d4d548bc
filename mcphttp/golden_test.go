package mcphttp

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

var update = flag.Bool("update", false, "rewrite the golden exchanges' responses with what the gateway answers now")

// TestGolden replays every exchange under testdata/golden against a gateway in front of a real
// go-sdk backend named "be": each file holds the request (method line, headers, body) and the
// expected response (status, the headers it lists, body). Run with -update to rewrite the
// responses after an intended change, then review the diff.
func TestGolden(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithCacheHints(60000, "public"))
	files, _ := filepath.Glob("testdata/golden/*.txt")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			// A gateway of its own: an exchange's answer does not depend on what the lists
			// cached for the ones before it (a call fetches its backend's tools list).
			gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := splitSections(t, raw)
			method, hdr, body := parseMessage(t, sections["request"])
			status, wantHdr, wantBody := parseMessage(t, sections["response"])
			got := do(t, method, gw.URL, hdr, string(body))
			gotResp := formatResponse(got, wantHdr)
			if *update {
				out := "-- request --\n" + sections["request"] + "-- response --\n" + gotResp
				if err := os.WriteFile(file, []byte(sections["comment"]+out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if strconv.Itoa(got.Status) != status {
				t.Errorf("status = %d, want %s", got.Status, status)
			}
			for k := range wantHdr {
				if g, w := got.Header.Get(k), wantHdr.Get(k); g != w {
					t.Errorf("header %s = %q, want %q", k, g, w)
				}
			}
			if g := bytes.TrimSpace(got.Body); !bytes.Equal(g, bytes.TrimSpace(wantBody)) {
				t.Errorf("body:\n%s\nwant:\n%s", g, wantBody)
			}
		})
	}
}

// splitSections reads the txtar-style file: free comment lines, then "-- name --" sections.
func splitSections(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	name := "comment"
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") {
			name = strings.TrimSuffix(strings.TrimPrefix(s, "-- "), " --")
			continue
		}
		out[name] += line
	}
	if out["request"] == "" || out["response"] == "" {
		t.Fatal("a golden file needs -- request -- and -- response -- sections")
	}
	return out
}

// parseMessage reads "FIRST LINE\nHeaders\n\nbody".
func parseMessage(t *testing.T, s string) (string, http.Header, []byte) {
	t.Helper()
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(s)))
	first, err := r.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	mh, err := r.ReadMIMEHeader()
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.R)
	return strings.TrimSpace(first), http.Header(mh), body
}

func formatResponse(r *response, listed http.Header) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(r.Status) + "\n")
	keys := make([]string, 0, len(listed))
	for k := range listed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k + ": " + r.Header.Get(k) + "\n")
	}
	b.WriteString("\n")
	b.Write(bytes.TrimSpace(r.Body))
	b.WriteString("\n")
	return b.String()
}
