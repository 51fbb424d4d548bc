package helm

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestURLPasswordsStayOutOfTheConfigMap: a URL whose user information carries a password is a
// credential the gateway uses (a backend's or an interceptor's Basic authorization, Redis's
// AUTH), and config.yaml is a ConfigMap, readable by more people and tools than a Secret, as is
// the Deployment that holds extraArgs and extraEnv. Such a URL is refused wherever it stands,
// redis.url, every string of config, a flag or a literal variable (a backend given by --upstream
// or MCPGW_UPSTREAMS), and the refusal names where without quoting the password. A URL with a user name alone, or an "@" past the authority,
// renders as given.
func TestURLPasswordsStayOutOfTheConfigMap(t *testing.T) {
	h := newHelm(t)
	const pw = "Pw-0f-the-test"
	backend := func(url string) []string {
		return []string{"config.upstreams[0].name=github", "config.upstreams[0].url=" + url}
	}
	refused := []struct {
		name string
		sets []string
		want string
	}{
		{"redis", []string{"redis.url=rediss://default:" + pw + "@redis.data:6380/0"}, "redis.url carries a password"},
		{"redis, password alone", []string{"redis.url=redis://:" + pw + "@redis.data:6379"}, "redis.url carries a password"},
		{"backend", backend("https://ops:" + pw + "@mcp.internal/mcp"), "config.upstreams[0].url is a URL with a password"},
		{"backend, an @ in the password", backend("http://ops:a@" + pw + "@mcp.internal:8080/mcp"), "config.upstreams[0].url is a URL with a password"},
		{"interceptor", []string{"config.interceptors[0].name=dlp", "config.interceptors[0].url=http://:" + pw + "@dlp.internal/mcp",
			"config.interceptors[0].type=validation", "config.interceptors[0].rules[0].tools[0]=*"}, "config.interceptors[0].url is a URL with a password"},
		{"a backend by variable", []string{"extraEnv[0].name=MCPGW_UPSTREAMS", "extraEnv[0].value=docs=http://docs/mcp\\,github=https://ops:" + pw + "@mcp.internal/mcp"},
			"extraEnv MCPGW_UPSTREAMS holds a URL with a password"},
		{"a backend by flag", []string{"extraArgs={--upstream,github=https://ops:" + pw + "@mcp.internal/mcp}"}, "extraArgs[1] holds a URL with a password"},
		{"a backend by flag, one argument", []string{"extraArgs={--upstream=github=http://:" + pw + "@mcp.internal/mcp}"}, "extraArgs[0] holds a URL with a password"},
		{"a secret's inline value", []string{"config.tracing.endpoint=http://otel:4318", "config.tracing.headers.X-Target.value=https://u:" + pw + "@example.com/"},
			"config.tracing.headers.X-Target.value gives a secret inline"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := h.refused(t, tc.want, tc.sets...); strings.Contains(err.Error(), pw) {
				t.Errorf("the refusal quotes the password: %v", err)
			}
		})
	}
	rendered := []struct {
		name, url string
	}{
		{"a user name alone", "https://ops@mcp.internal/mcp"},
		{"a user name and a port", "http://ops@mcp.internal:8080/mcp"},
		{"an @ in the path", "https://mcp.internal/a:b@c/mcp"},
		{"an @ in the query", "https://mcp.internal/mcp?u=a:b@c"},
		{"an IPv6 host", "http://[fd00::1]:8080/mcp"},
	}
	t.Run("a backend by flag with a user name alone", func(t *testing.T) {
		t.Parallel()
		h.renderMinimal(t, "extraArgs={--upstream,github=https://ops@mcp.internal/mcp}")
	})
	for _, tc := range rendered {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := h.renderMinimal(t, backend(tc.url)...)
			cfg := parseConfig(t, find[*corev1.ConfigMap](t, m, fullname))
			if len(cfg.Upstreams) != 1 || cfg.Upstreams[0].URL != tc.url {
				t.Errorf("config.yaml upstreams %+v, want the one backend at %s", cfg.Upstreams, tc.url)
			}
		})
	}
}

// TestSecretVariablesNotLiteral: a variable config reads a secret from ({env: NAME}) given a
// literal value in extraEnv writes the secret into the Deployment, which more may read than a
// Secret; it is refused, naming the variable and the setting, never the value. The same
// variable from a Secret (valueFrom) renders, and so does a literal variable config does not
// read a secret from.
func TestSecretVariablesNotLiteral(t *testing.T) {
	h := newHelm(t)
	const token = "Bearer tok-0f-the-test"
	sets := func(env ...string) []string {
		return append([]string{"config.upstreams[0].name=github", "config.upstreams[0].url=https://mcp.internal/mcp",
			"config.upstreams[0].headers.Authorization.env=GITHUB_TOKEN"}, env...)
	}
	t.Run("literal", func(t *testing.T) {
		t.Parallel()
		err := h.refused(t, "extraEnv GITHUB_TOKEN: config.upstreams[0].headers.Authorization.env reads a secret from it",
			sets("extraEnv[0].name=GITHUB_TOKEN", "extraEnv[0].value="+token)...)
		if strings.Contains(err.Error(), "tok-0f-the-test") {
			t.Errorf("the refusal quotes the secret: %v", err)
		}
	})
	t.Run("from a Secret", func(t *testing.T) {
		t.Parallel()
		h.renderMinimal(t, sets("extraEnv[0].name=GITHUB_TOKEN",
			"extraEnv[0].valueFrom.secretKeyRef.name=github", "extraEnv[0].valueFrom.secretKeyRef.key=token")...)
	})
	t.Run("a literal config reads no secret from", func(t *testing.T) {
		t.Parallel()
		h.renderMinimal(t, sets("extraEnv[0].name=GITHUB_ORG", "extraEnv[0].value=acme")...)
	})
}

// TestInlineSecretsRefused: a secret of config given inline ({value: ...}, the gateway's form for
// development) would stand in clear in the ConfigMap; it is refused wherever config has a
// secret (a backend's or an interceptor's header, a tracing header, a client secret), naming
// where and never the value, and the same secret from a file renders.
func TestInlineSecretsRefused(t *testing.T) {
	h := newHelm(t)
	const secret = "inline-s3cret-of-the-test"
	backend := []string{"config.upstreams[0].name=github", "config.upstreams[0].url=https://mcp.internal/mcp"}
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"a backend's header", append(backend, "config.upstreams[0].headers.Authorization.value=Bearer "+secret),
			"config.upstreams[0].headers.Authorization.value gives a secret inline"},
		{"a backend's client secret", append(backend, "config.upstreams[0].auth.type=clientCredentials",
			"config.upstreams[0].auth.tokenURL=https://idp.internal/token", "config.upstreams[0].auth.clientID=gw",
			"config.upstreams[0].auth.clientSecret.value="+secret), "config.upstreams[0].auth.clientSecret.value gives a secret inline"},
		{"an interceptor's header", []string{"config.interceptors[0].name=dlp", "config.interceptors[0].url=http://dlp/mcp",
			"config.interceptors[0].type=validation", "config.interceptors[0].rules[0].tools[0]=*",
			"config.interceptors[0].headers.Authorization.value=" + secret}, "config.interceptors[0].headers.Authorization.value gives a secret inline"},
		{"a tracing header", []string{"config.tracing.endpoint=http://otel:4318", "config.tracing.headers.X-Api-Key.value=" + secret},
			"config.tracing.headers.X-Api-Key.value gives a secret inline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := h.refused(t, tc.want, tc.sets...); strings.Contains(err.Error(), secret) {
				t.Errorf("the refusal quotes the secret: %v", err)
			}
		})
	}
	t.Run("from a file", func(t *testing.T) {
		t.Parallel()
		h.renderMinimal(t, append(backend, "config.upstreams[0].headers.Authorization.file=/etc/mcp-gateway/secrets/github",
			"secrets.files.github=Bearer "+secret)...)
	})
}
