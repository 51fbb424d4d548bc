package tracing

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none for a valid config
	}{
		{"disabled", Config{SampleRatio: 7}, nil},
		{"http insecure", Config{Endpoint: "http://collector:4318", Insecure: true}, nil},
		{"https with path", Config{Endpoint: "https://otel.example.com/otlp/", SampleRatio: 0.25, Timeout: time.Second,
			Headers: map[string]string{"Authorization": "Bearer k"}}, nil},
		{"http without insecure", Config{Endpoint: "http://collector:4318"}, []string{"set tracing.insecure"}},
		{"insecure https", Config{Endpoint: "https://collector:4318", Insecure: true}, []string{"tracing.endpoint: https, but tracing.insecure"}},
		{"no host", Config{Endpoint: "collector:4318"}, []string{"tracing.endpoint"}},
		{"credentials", Config{Endpoint: "https://u:p@collector:4318"}, []string{"without credentials"}},
		// The full traces URL, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT takes it: the gateway would
		// post to .../v1/traces/v1/traces.
		{"the traces URL", Config{Endpoint: "http://collector:4318/v1/traces", Insecure: true}, []string{"tracing.endpoint: ", "base URL"}},
		{"the traces URL with a slash", Config{Endpoint: "https://otel.example.com/otlp/v1/traces/"}, []string{"tracing.endpoint: ", "base URL"}},
		{"everything wrong", Config{Endpoint: "ftp://collector", SampleRatio: 1.5, Timeout: -1,
			Headers: map[string]string{"Bad Name": "v", "X-Key": "line\nbreak-secret"}},
			[]string{"tracing.endpoint: want an http or https URL", "sampleRatio", "timeout", `"Bad Name"`, "tracing.headers.X-Key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "break-secret") {
				t.Errorf("error reveals a header value: %v", err)
			}
		})
	}
}

func TestExportURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://collector:4318":           "http://collector:4318/v1/traces",
		"http://collector:4318/":          "http://collector:4318/v1/traces",
		"https://otel.example.com/otlp/":  "https://otel.example.com/otlp/v1/traces",
		"https://otel.example.com/a/b//":  "https://otel.example.com/a/b/v1/traces",
		"https://otel.example.com:443/ab": "https://otel.example.com:443/ab/v1/traces",
	} {
		if got := (Config{Endpoint: in}).exportURL(); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	c := Config{Endpoint: "http://127.0.0.1:4318"}.WithDefaults()
	if c.ServiceName != DefaultServiceName || c.SampleRatio != DefaultSampleRatio || c.Timeout != DefaultTimeout {
		t.Errorf("defaults not applied: %+v", c)
	}
	c = Config{ServiceName: "edge", SampleRatio: 0.5, Timeout: time.Second}.WithDefaults()
	if c.ServiceName != "edge" || c.SampleRatio != 0.5 || c.Timeout != time.Second {
		t.Errorf("explicit values overridden: %+v", c)
	}
}
