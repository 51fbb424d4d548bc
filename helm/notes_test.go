package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestNotes: the commands NOTES.txt prints after an install reach the gateway as rendered: the
// Service and its ports, the endpoint's path, and the scheme the MCP listener speaks (TLS when
// tls.enabled).
func TestNotes(t *testing.T) {
	h := newHelm(t)
	cases := []struct {
		name    string
		sets    []string
		want    []string
		wantNot []string
	}{
		{name: "plain", want: []string{
			"kubectl -n mcp port-forward svc/" + fullname + " 8080:80\n",
			"then http://127.0.0.1:8080/mcp\n",
			"kubectl -n mcp port-forward svc/" + fullname + "-admin 9090:9090\n",
		}},
		{name: "TLS at the gateway", sets: []string{"tls.enabled=true", "tls.secretName=mcp-tls"},
			want:    []string{"then https://127.0.0.1:8080/mcp"},
			wantNot: []string{"http://127.0.0.1:8080"}},
		{name: "no server settings", sets: []string{"config.server=null", "config.auth.disabled=true", "extraArgs={--force}"},
			want: []string{"then http://127.0.0.1:8080/mcp\n", "WARNING: auth.disabled is true"}},
		{name: "other ports and path", sets: []string{"service.port=8443", "service.adminPort=9443", "config.server.path=/tools"},
			want: []string{"port-forward svc/" + fullname + " 8080:8443\n", "then http://127.0.0.1:8080/tools\n", " 9090:9443\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			notes := renderNotes(t, h, tc.sets...)
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("NOTES lack %q:\n%s", w, notes)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(notes, w) {
					t.Errorf("NOTES hold %q:\n%s", w, notes)
				}
			}
		})
	}
}

// renderNotes renders NOTES.txt over minimal.yaml and sets. `helm template` does not print the
// notes and `helm install --dry-run` needs a cluster, so a copy of the chart carries them as a
// named template that one more template prints.
func renderNotes(t *testing.T, h helmCLI, sets ...string) string {
	t.Helper()
	chart := filepath.Join(t.TempDir(), "mcp-gateway")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(h.root, chartDir))); err != nil {
		t.Fatal(err)
	}
	templates := filepath.Join(chart, "templates")
	notes, err := os.ReadFile(filepath.Join(templates, "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"_notes.tpl":      `{{- define "test.notes" -}}` + string(notes) + `{{- end }}`,
		"notes-text.yaml": `notes: {{ include "test.notes" . | toJson }}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(templates, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"template", releaseName, chart, "--namespace", namespace,
		"--values", filepath.Join("helm", "testdata", "minimal.yaml"), "--show-only", "templates/notes-text.yaml"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := h.run(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	var doc struct {
		Notes string `json:"notes"`
	}
	if err := sigsyaml.Unmarshal(stripComments(out), &doc); err != nil || doc.Notes == "" {
		t.Fatalf("no notes rendered (%v):\n%s", err, out)
	}
	return doc.Notes + "\n"
}
