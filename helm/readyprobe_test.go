package helm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestReadinessProbeOutlastsReadyz: the readiness probe waits longer than /readyz takes at most
// (mcphttp.ReadyTimeout), by default and at the least the values schema accepts. A probe that
// gives up first fails whatever /readyz would have said: a dependency that does not answer would
// make every replica unready, even one whose check is advisory (admin.redisReadiness).
func TestReadinessProbeOutlastsReadyz(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Probes struct {
			Readiness struct {
				TimeoutSeconds int `yaml:"timeoutSeconds"`
			} `yaml:"readiness"`
		} `yaml:"probes"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	if raw, err = os.ReadFile(filepath.Join(root, schemaPath)); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Probes struct {
				Properties struct {
					Readiness struct {
						Properties struct {
							TimeoutSeconds struct {
								Minimum *int `json:"minimum"`
							} `json:"timeoutSeconds"`
						} `json:"properties"`
					} `json:"readiness"`
				} `json:"properties"`
			} `json:"probes"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	minimum := schema.Properties.Probes.Properties.Readiness.Properties.TimeoutSeconds.Minimum
	for _, c := range []struct {
		what    string
		seconds int
	}{
		{"probes.readiness.timeoutSeconds in values.yaml", values.Probes.Readiness.TimeoutSeconds},
		{"the schema's minimum of probes.readiness.timeoutSeconds", func() int {
			if minimum == nil {
				return 0
			}
			return *minimum
		}()},
	} {
		if time.Duration(c.seconds)*time.Second <= mcphttp.ReadyTimeout {
			t.Errorf("%s is %d s, want more than /readyz's bound %v", c.what, c.seconds, mcphttp.ReadyTimeout)
		}
	}
}
