package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValuesTyposRefused: a misspelt key anywhere in the values, inside list entries too, fails
// `helm template` (no --kube-version: the chart renders with a helm built from source) with an
// error naming the key and where it is, instead of rendering a config.yaml the gateway refuses
// (a crash loop) or a pod field the API server drops. Each typo sits beside valid keys, so a
// schema that only checks required keys would let it through.
func TestValuesTyposRefused(t *testing.T) {
	h := newHelm(t)
	cases := []struct{ name, yaml, want string }{
		{"upstream entry", "config:\n  upstreams:\n    - name: github\n      url: http://github-mcp:8080/mcp\n      timout: 30s\n",
			"'/config/upstreams/0': additional properties 'timout'"},
		{"upstream header", "config:\n  upstreams:\n    - name: github\n      url: http://github-mcp:8080/mcp\n      headers: {Authorization: {fiel: /x}}\n",
			"/config/upstreams/0/headers/Authorization"},
		{"issuer entry", "config:\n  auth:\n    issuers:\n      - issuer: https://idp.example.com/\n        audience: [x]\n",
			"'/config/auth/issuers/0': additional properties 'audience'"},
		{"policy rule", "config:\n  auth:\n    issuers: [{issuer: https://idp.example.com/}]\n    policy:\n      rules:\n        - {id: r, upstream: github, tool: [x]}\n",
			"'/config/auth/policy/rules/0': additional properties 'tool'"},
		{"tool set selector", "config:\n  toolsets:\n    - name: ro\n      include: [{upstream: github, tool: [x]}]\n",
			"'/config/toolsets/0/include/0': additional properties 'tool'"},
		{"mrtr key", "mrtr:\n  keys:\n    - id: k1\n      secret: bWluaW1hbC10ZXN0LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24tdXNlIQ==\n      rotate: true\n",
			"'/mrtr/keys/0': additional properties 'rotate'"},
		{"ingress path", "ingress:\n  enabled: true\n  hosts:\n    - host: mcp.example.com\n      paths: [{path: /, pathtype: Prefix}]\n",
			"'/ingress/hosts/0/paths/0': additional properties 'pathtype'"},
		{"interceptor entry", "config:\n  interceptors:\n    - {name: dlp, url: https://dlp.tools.svc/mcp, typ: validation, rules: [{tools: [\"*\"]}]}\n",
			"'/config/interceptors/0': additional properties 'typ'"},
		{"interceptor rule", "config:\n  interceptors:\n    - {name: dlp, url: https://dlp.tools.svc/mcp, type: validation, rules: [{tool: [\"*\"]}]}\n",
			"'/config/interceptors/0/rules/0': additional properties 'tool'"},
		{"guardrail rule", "config:\n  guardrails:\n    rules:\n      - {id: g, tools: [\"*\"], result: {secrets: redact}}\n",
			"'/config/guardrails/rules/0': additional properties 'result'"},
		{"guardrail detector", "config:\n  guardrails:\n    rules:\n      - {id: g, tools: [\"*\"], results: {detectors: {jwt: block, emial: redact}}}\n",
			"/config/guardrails/rules/0/results/detectors"},
		{"guardrail detector action", "config:\n  guardrails:\n    rules:\n      - {id: g, tools: [\"*\"], arguments: {detectors: {jwt: flag}}}\n",
			"/config/guardrails/rules/0/arguments/detectors/jwt"},
		{"userOAuth address list", "config:\n  userOAuth:\n    allowAdresses: [10.0.0.0/8]\n",
			"'/config/userOAuth': additional properties 'allowAdresses'"},
		{"userOAuth key", "config:\n  userOAuth:\n    keys: [{id: v1, secrt: {file: /x}}]\n",
			"'/config/userOAuth/keys/0': additional properties 'secrt'"},
		{"extra env entry", "extraEnv:\n  - name: X\n    valu: y\n", "'/extraEnv/0': additional properties 'valu'"},
		{"toleration", "tolerations:\n  - key: a\n    operater: Exists\n", "'/tolerations/0': additional properties 'operater'"},
		{"security context", "securityContext:\n  runAsUsr: 1000\n", "'/securityContext': additional properties 'runAsUsr'"},
		{"resources", "resources:\n  limit: {memory: 1Gi}\n", "'/resources': additional properties 'limit'"},
		{"affinity", "affinity:\n  nodeAfinity: {}\n", "'/affinity': additional properties 'nodeAfinity'"},
		{"network peer", "networkPolicy:\n  enabled: true\n  adminFrom:\n    - namespaceSelecter: {}\n",
			"'/networkPolicy/adminFrom/0': additional properties 'namespaceSelecter'"},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := h.run(t, "template", releaseName, chartDir, "--namespace", namespace,
				"--values", filepath.Join("helm", "testdata", "minimal.yaml"), "--values", file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("typo %d: err = %v, want it to contain %q", i, err, tc.want)
			}
		})
	}
}
