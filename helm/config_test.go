package helm

import (
	"bytes"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
)

// gatewayConfig mirrors the documented config.yaml contract of `gateway serve --config`. It is
// decoded with unknown keys rejected, as the gateway does, so a key the chart invents or
// misspells fails here.
type gatewayConfig struct {
	Server struct {
		Listen          string           `yaml:"listen"`
		Path            string           `yaml:"path"`
		PublicURL       string           `yaml:"publicURL"`
		MaxBodyBytes    int64            `yaml:"maxBodyBytes"`
		AllowedOrigins  []string         `yaml:"allowedOrigins"`
		TrustedProxies  []string         `yaml:"trustedProxies"`
		TLS             *tlsFiles        `yaml:"tls"`
		DrainDelay      duration         `yaml:"drainDelay"`
		ShutdownTimeout duration         `yaml:"shutdownTimeout"`
		Search          toolSearchConfig `yaml:"search"`
	} `yaml:"server"`
	Toolsets []toolsetConfig `yaml:"toolsets"`
	Admin    struct {
		Listen         string        `yaml:"listen"`
		Pprof          bool          `yaml:"pprof"`
		RedisReadiness string        `yaml:"redisReadiness"`
		Token          *secretSource `yaml:"token"`
		Explain        struct {
			Enabled bool          `yaml:"enabled"`
			Secret  *secretSource `yaml:"secret"`
		} `yaml:"explain"`
	} `yaml:"admin"`
	Log struct {
		Level  string `yaml:"level"`
		Format string `yaml:"format"`
	} `yaml:"log"`
	Auth      authConfig  `yaml:"auth"`
	MRTR      mrtrConfig  `yaml:"mrtr"`
	Redis     redisConfig `yaml:"redis"`
	Namespace struct {
		Separator string `yaml:"separator"`
		NoPrefix  bool   `yaml:"noPrefix"`
	} `yaml:"namespace"`
	Upstreams []upstreamConfig `yaml:"upstreams"`
	RateLimit struct {
		PerCaller  string `yaml:"perCaller"`
		FailClosed bool   `yaml:"failClosed"`
	} `yaml:"rateLimit"`
	HealthInterval duration       `yaml:"healthInterval"`
	Tracing        tracingConfig  `yaml:"tracing"`
	Approval       approvalConfig `yaml:"approval"`
	Pins           *pinsConfig    `yaml:"pins"`
	UserOAuth      *struct {
		Path           string         `yaml:"path"`
		AllowAddresses []string       `yaml:"allowAddresses"`
		Keys           []keyReference `yaml:"keys"`
	} `yaml:"userOAuth"`
	Interceptors []interceptorConfig `yaml:"interceptors"`
	Guardrails   *guardrailsConfig   `yaml:"guardrails"`
	Legacy       struct {
		Enabled              bool     `yaml:"enabled"`
		Versions             []string `yaml:"versions"`
		SessionTTL           duration `yaml:"sessionTTL"`
		RequireSession       bool     `yaml:"requireSession"`
		GetStream            bool     `yaml:"getStream"`
		AskTimeout           duration `yaml:"askTimeout"`
		MaxRounds            int      `yaml:"maxRounds"`
		MaxPendingPerSession int      `yaml:"maxPendingPerSession"`
		MaxBatchMessages     int      `yaml:"maxBatchMessages"`
		MaxBatchBytes        int64    `yaml:"maxBatchBytes"`
		BatchConcurrency     int      `yaml:"batchConcurrency"`
	} `yaml:"legacy"`
}

// toolsetConfig is one entry of toolsets: (docs/toolsets.md).
type toolsetConfig struct {
	Name         string           `yaml:"name"`
	Path         string           `yaml:"path"`
	Include      []toolSelector   `yaml:"include"`
	Exclude      []toolSelector   `yaml:"exclude"`
	Search       toolSearchConfig `yaml:"search"`
	Instructions string           `yaml:"instructions"`
}

// toolSelector selects a set's items by backend and name globs.
type toolSelector struct {
	Upstream  string   `yaml:"upstream"`
	Tools     []string `yaml:"tools"`
	Prompts   []string `yaml:"prompts"`
	Resources []string `yaml:"resources"`
}

// toolSearchConfig is the search mode of an endpoint.
type toolSearchConfig struct {
	Enabled       bool     `yaml:"enabled"`
	AlwaysVisible []string `yaml:"alwaysVisible"`
	MaxResults    int      `yaml:"maxResults"`
}

// approvalConfig is the approval page of confirm: url rules.
type approvalConfig struct {
	Path         string        `yaml:"path"`
	BaseURL      string        `yaml:"baseURL"`
	Issuer       string        `yaml:"issuer"`
	ClientID     string        `yaml:"clientID"`
	ClientSecret *secretSource `yaml:"clientSecret"`
	SessionTTL   duration      `yaml:"sessionTTL"`
}

// pinsConfig is the pins section (docs/pinning.md).
type pinsConfig struct {
	Mode     string            `yaml:"mode"`
	LockFile string            `yaml:"lockFile"`
	Actions  map[string]string `yaml:"actions"`
	Backends map[string]struct {
		Mode    string            `yaml:"mode"`
		Actions map[string]string `yaml:"actions"`
	} `yaml:"backends"`
}

type tracingConfig struct {
	Endpoint    string                  `yaml:"endpoint"`
	ServiceName string                  `yaml:"serviceName"`
	SampleRatio float64                 `yaml:"sampleRatio"`
	Headers     map[string]secretSource `yaml:"headers"`
	Insecure    bool                    `yaml:"insecure"`
	Timeout     duration                `yaml:"timeout"`
}

type tlsFiles struct {
	CertFile string `yaml:"certFile"`
	KeyFile  string `yaml:"keyFile"`
}

type authConfig struct {
	Disabled bool `yaml:"disabled"`
	Issuers  []struct {
		Issuer    string   `yaml:"issuer"`
		Audiences []string `yaml:"audiences"`
	} `yaml:"issuers"`
	ScopeHierarchy   map[string][]string `yaml:"scopeHierarchy"`
	ResourceMetadata struct {
		ScopesSupported []string `yaml:"scopesSupported"`
		ResourceName    string   `yaml:"resourceName"`
	} `yaml:"resourceMetadata"`
	Policy struct {
		Rules []struct {
			ID        string   `yaml:"id"`
			Upstream  string   `yaml:"upstream"`
			Issuers   []string `yaml:"issuers"`
			Tools     []string `yaml:"tools"`
			AnyScope  []string `yaml:"anyScope"`
			AllScopes []string `yaml:"allScopes"`
			// Confirm is true, false, "form" or "url".
			Confirm         any    `yaml:"confirm"`
			ConfirmFallback string `yaml:"confirmFallback"`
		} `yaml:"rules"`
	} `yaml:"policy"`
}

// secretSource is the contract's {value|file|env} secret reference.
type secretSource struct {
	Value string `yaml:"value"`
	File  string `yaml:"file"`
	Env   string `yaml:"env"`
}

type mrtrConfig struct {
	Keys []struct {
		ID       string       `yaml:"id"`
		Secret   secretSource `yaml:"secret"`
		OpenOnly bool         `yaml:"openOnly"`
	} `yaml:"keys"`
	TTL duration `yaml:"ttl"`
}

type redisConfig struct {
	URL          string        `yaml:"url"`
	Password     *secretSource `yaml:"password"`
	Addrs        []string      `yaml:"addrs"`
	MasterName   string        `yaml:"masterName"`
	KeyPrefix    string        `yaml:"keyPrefix"`
	WaitReplicas int           `yaml:"waitReplicas"`
	TLS          *struct {
		CAFile string `yaml:"caFile"`
	} `yaml:"tls"`
}

type upstreamConfig struct {
	Name    string                  `yaml:"name"`
	URL     string                  `yaml:"url"`
	Timeout duration                `yaml:"timeout"`
	Headers map[string]secretSource `yaml:"headers"`
	Auth    *struct {
		Type     string   `yaml:"type"`
		ClientID string   `yaml:"clientID"`
		Scopes   []string `yaml:"scopes"`
	} `yaml:"auth"`
}

// keyReference is a sealing key whose secret is a file.
type keyReference struct {
	ID     string       `yaml:"id"`
	Secret secretSource `yaml:"secret"`
}

// interceptorConfig is one entry of interceptors: (docs/interceptors.md).
type interceptorConfig struct {
	Name    string                  `yaml:"name"`
	URL     string                  `yaml:"url"`
	Type    string                  `yaml:"type"`
	Headers map[string]secretSource `yaml:"headers"`
	Rules   []struct {
		Upstream string   `yaml:"upstream"`
		Tools    []string `yaml:"tools"`
		Phases   []string `yaml:"phases"`
	} `yaml:"rules"`
}

// guardrailsConfig is the guardrails section (docs/guardrails.md).
type guardrailsConfig struct {
	AllowedHosts []string `yaml:"allowedHosts"`
	Rules        []struct {
		ID        string            `yaml:"id"`
		Upstream  string            `yaml:"upstream"`
		Tools     []string          `yaml:"tools"`
		Validate  map[string]string `yaml:"validate"`
		Arguments map[string]string `yaml:"arguments"`
		Results   map[string]string `yaml:"results"`
	} `yaml:"rules"`
}

// duration is a Go duration string in config.yaml.
type duration time.Duration

// UnmarshalYAML parses "10s"-style values, rejecting anything time.ParseDuration rejects.
func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// parseConfig decodes config.yaml from the gateway's ConfigMap strictly.
func parseConfig(t *testing.T, cm *corev1.ConfigMap) gatewayConfig {
	t.Helper()
	raw, ok := cm.Data["config.yaml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no config.yaml", cm.Name)
	}
	dec := yaml.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.KnownFields(true)
	var cfg gatewayConfig
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("config.yaml does not match the gateway's config contract: %v\n%s", err, raw)
	}
	return cfg
}
