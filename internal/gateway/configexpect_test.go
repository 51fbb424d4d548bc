package gateway

import (
	"encoding"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/configyaml"
)

// TestSelfDecodingSettingsSayWhatTheyExpect: every type of the configuration that decodes
// itself from YAML (an enumeration such as confirm's) has its own description of what it takes,
// since its Go kind says nothing an operator can use: without one, a refused value was answered
// "expected a value of ConfirmMode". The check is over the types, so a setting added later is
// covered too.
func TestSelfDecodingSettingsSayWhatTheyExpect(t *testing.T) {
	expect := yamlOptions().Expect
	seen, found := map[reflect.Type]bool{}, 0
	var visit func(reflect.Type, string)
	visit = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		p := reflect.PointerTo(typ)
		for _, iface := range []reflect.Type{reflect.TypeFor[encoding.TextUnmarshaler](), reflect.TypeFor[yaml.Unmarshaler]()} {
			if typ.Implements(iface) || p.Implements(iface) {
				found++
				if expect[typ] == "" {
					t.Errorf("%s (%s) decodes itself, and yamlOptions says nothing of what it takes", path, typ)
				}
				return
			}
		}
		if typ.Kind() == reflect.Struct {
			for _, f := range configyaml.Fields(typ) {
				visit(f.Type, strings.TrimPrefix(path+"."+f.Key, "."))
			}
		}
	}
	visit(reflect.TypeFor[Config](), "")
	if found == 0 {
		t.Fatal("the walk found no self-decoding setting: confirm is one")
	}
	// And the description is what an operator reads.
	c := newConfig()
	err := decodeYAML(strings.NewReader("auth: {policy: {rules: [{id: r, confirm: maybe}]}}\n"), &c)
	if err == nil || !strings.Contains(err.Error(), "auth.policy.rules[0].confirm: expected true (the client's form), false, form or url") {
		t.Errorf("a refused confirm: %v", err)
	}
}

// TestKeysLookLikeKeys: an unknown key is printed only when it looks like a key or is a known
// key misspelt (configyaml.ShownKey), so every key of the configuration must be shown, and so
// must a key a letter longer or with a letter in another case: a misspelt key is still shown
// and a key suggested for it. The check is over the types, so a key added later is covered too.
func TestKeysLookLikeKeys(t *testing.T) {
	seen, keys := map[reflect.Type]bool{}, 0
	var visit func(reflect.Type, string)
	visit = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if seen[typ] || typ.Kind() != reflect.Struct {
			return
		}
		seen[typ] = true
		for _, f := range configyaml.Fields(typ) {
			keys++
			p := strings.TrimPrefix(path+"."+f.Key, ".")
			for _, k := range []string{f.Key, f.Key + "s", strings.ToUpper(f.Key[:1]) + f.Key[1:]} {
				if !configyaml.ShownKey(k, []string{f.Key}) {
					t.Errorf("%s: %q does not look like a key: a misspelling of it would not be shown", p, k)
				}
			}
			visit(f.Type, p)
		}
	}
	visit(reflect.TypeFor[Config](), "")
	if keys < 100 {
		t.Fatalf("the walk found %d keys", keys)
	}
}
