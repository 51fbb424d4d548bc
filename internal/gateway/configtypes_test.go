package gateway

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/upstreams"
)

// fillSettings sets every exported field of the struct v points to a distinct non-zero value,
// recursively, except fields not read from YAML (yaml:"-"): those are the resolved secrets the
// caller fills in. seed makes the values of two calls differ.
func fillSettings(t *testing.T, v reflect.Value, seed *int) {
	t.Helper()
	typ := v.Type()
	for i := range typ.NumField() {
		f, fv := typ.Field(i), v.Field(i)
		if !f.IsExported() || f.Tag.Get("yaml") == "-" {
			continue
		}
		fillValue(t, f.Name, fv, seed)
	}
}

func fillValue(t *testing.T, name string, fv reflect.Value, seed *int) {
	t.Helper()
	*seed++
	switch {
	case fv.Type() == reflect.TypeFor[time.Duration]():
		fv.SetInt(int64(time.Duration(*seed) * time.Second))
	case fv.Kind() == reflect.String:
		fv.SetString(fmt.Sprintf("%s-%d", strings.ToLower(name), *seed))
	case fv.Kind() == reflect.Bool:
		fv.SetBool(true)
	case fv.CanInt():
		fv.SetInt(int64(*seed))
	case fv.CanFloat():
		fv.SetFloat(float64(*seed) / 1000)
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
		fv.Set(reflect.ValueOf([]string{fmt.Sprintf("%s-%d", strings.ToLower(name), *seed)}).Convert(fv.Type()))
	case fv.Kind() == reflect.Struct:
		fillSettings(t, fv, seed)
	case fv.Kind() == reflect.Map, fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
		// Header maps and the list of backends: the test writes those itself.
	default:
		t.Fatalf("field %s: kind %s has no filler; extend fillValue", name, fv.Type())
	}
}

// TestUpstreamSettingsCarried: every setting upstreams defines, at the top level and per backend,
// set in the configuration file, reaches upstreams.Config unchanged, and the file form adds only
// the secrets. The settings are enumerated by reflection from the upstreams types themselves, so
// a field added there is covered without touching this test or the gateway's configuration.
func TestUpstreamSettingsCarried(t *testing.T) {
	seed := 0
	var want upstreams.Config
	fillSettings(t, reflect.ValueOf(&want).Elem(), &seed)
	for range 2 {
		var u upstreams.UpstreamConfig
		fillSettings(t, reflect.ValueOf(&u).Elem(), &seed)
		// Auth is read from the file beside its secret, so upstreams does not read it itself.
		fillSettings(t, reflect.ValueOf(&u.Auth).Elem(), &seed)
		u.Auth.Type = upstreams.AuthClientCredentials
		want.Upstreams = append(want.Upstreams, u)
	}

	// Write the file the way an operator would: the top-level settings and each backend's,
	// plus secrets for its header and its OAuth client secret.
	doc := map[string]any{}
	addYAML(t, doc, want)
	var list []any
	for i, u := range want.Upstreams {
		m := map[string]any{}
		addYAML(t, m, u)
		m["headers"] = map[string]any{"X-Api-Key": map[string]any{"value": fmt.Sprintf("key-%d", i)}}
		auth := map[string]any{"clientSecret": map[string]any{"env": fmt.Sprintf("SECRET_%d", i)}}
		addYAML(t, auth, u.Auth)
		m["auth"] = auth
		list = append(list, m)
	}
	doc["upstreams"] = list
	raw, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := newConfig()
	if err := decodeYAML(bytes.NewReader(raw), &c); err != nil {
		t.Fatalf("the file with every setting does not load: %v\n%s", err, raw)
	}
	resolved, err := c.resolveSecrets(func(k string) string { return "env-" + k })
	if err != nil {
		t.Fatal(err)
	}
	got := c.upstreamsConfig(resolved)

	for i := range want.Upstreams {
		want.Upstreams[i].Headers = map[string]string{"X-Api-Key": fmt.Sprintf("key-%d", i)}
		want.Upstreams[i].Auth.ClientSecret = fmt.Sprintf("env-SECRET_%d", i)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("upstreams.Config differs from the file:\n got %+v\nwant %+v\nfile:\n%s", got, want, raw)
	}
}

// addYAML adds the YAML keys of v (a struct of settings) to m, as yaml.Marshal writes them.
func addYAML(t *testing.T, m map[string]any, v any) {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var kv map[string]any
	if err := yaml.Unmarshal(b, &kv); err != nil {
		t.Fatal(err)
	}
	for k, x := range kv {
		m[k] = x
	}
}

// TestTracingSettingsCarried: every setting of tracing.Config the operator writes in the
// tracing: block reaches the tracer's configuration unchanged; the file form adds only the
// header secrets, and the gateway its own version.
func TestTracingSettingsCarried(t *testing.T) {
	seed := 0
	var want tracing.Config
	fillSettings(t, reflect.ValueOf(&want).Elem(), &seed)
	block := map[string]any{}
	addYAML(t, block, want)
	block["headers"] = map[string]any{"Api-Key": map[string]any{"value": "collector-key"}}
	raw, err := yaml.Marshal(map[string]any{"tracing": block})
	if err != nil {
		t.Fatal(err)
	}
	c := newConfig()
	if err := decodeYAML(bytes.NewReader(raw), &c); err != nil {
		t.Fatalf("the tracing block with every setting does not load: %v\n%s", err, raw)
	}
	headers := map[string]string{}
	for h, s := range c.Tracing.Headers {
		v, err := s.resolve(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		headers[h] = v
	}
	want.ServiceVersion, want.Headers = "dev", map[string]string{"Api-Key": "collector-key"}
	if got := c.Tracing.config("dev", headers); !reflect.DeepEqual(got, want) {
		t.Errorf("tracing.Config differs from the file:\n got %+v\nwant %+v\nfile:\n%s", got, want, raw)
	}
}
