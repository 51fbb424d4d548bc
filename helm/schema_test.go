package helm

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/mcp-gateway/gateway/internal/gateway"
	"github.com/mcp-gateway/gateway/internal/testsupport/schemawalk"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite helm/mcp-gateway/values.schema.json from the Go types")

const schemaPath = chartDir + "/values.schema.json"

// typedValues are the values whose shape a Go type defines: the gateway's configuration (yaml
// names) and the Kubernetes objects the chart passes through into the pod spec (json names).
// The values schema must accept exactly their keys: every key the type has (or the schema
// refuses a valid value), and nothing else, in every object and every list entry (or a typo
// such as upstreams[0].ulr renders and then crash-loops the pods, or is dropped by the API
// server).
func typedValues() []struct {
	path []string
	typ  reflect.Type
	tag  string
} {
	type tv = struct {
		path []string
		typ  reflect.Type
		tag  string
	}
	return []tv{
		{[]string{"config"}, reflect.TypeFor[gateway.Config](), "yaml"},
		{[]string{"podSecurityContext"}, reflect.TypeFor[corev1.PodSecurityContext](), "json"},
		{[]string{"securityContext"}, reflect.TypeFor[corev1.SecurityContext](), "json"},
		{[]string{"resources"}, reflect.TypeFor[corev1.ResourceRequirements](), "json"},
		{[]string{"redis", "internal", "resources"}, reflect.TypeFor[corev1.ResourceRequirements](), "json"},
		{[]string{"affinity"}, reflect.TypeFor[corev1.Affinity](), "json"},
		{[]string{"tolerations"}, reflect.TypeFor[[]corev1.Toleration](), "json"},
		{[]string{"topologySpreadConstraints"}, reflect.TypeFor[[]corev1.TopologySpreadConstraint](), "json"},
		{[]string{"extraEnv"}, reflect.TypeFor[[]corev1.EnvVar](), "json"},
		{[]string{"extraVolumes"}, reflect.TypeFor[[]corev1.Volume](), "json"},
		{[]string{"extraVolumeMounts"}, reflect.TypeFor[[]corev1.VolumeMount](), "json"},
		{[]string{"autoscaling", "behavior"}, reflect.TypeFor[autoscalingv2.HorizontalPodAutoscalerBehavior](), "json"},
		{[]string{"networkPolicy", "mcpFrom"}, reflect.TypeFor[[]networkingv1.NetworkPolicyPeer](), "json"},
		{[]string{"networkPolicy", "adminFrom"}, reflect.TypeFor[[]networkingv1.NetworkPolicyPeer](), "json"},
		{[]string{"networkPolicy", "egress"}, reflect.TypeFor[[]networkingv1.NetworkPolicyEgressRule](), "json"},
	}
}

// TestValuesSchemaMatchesTypes: the values schema is what the Go types say (hand-written
// descriptions, enums and patterns kept), and every object in it, list entries included, refuses
// unknown keys. `go test ./helm -run TestValuesSchemaMatchesTypes -update-schema` rewrites it.
func TestValuesSchemaMatchesTypes(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, schemaPath))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	for _, tv := range typedValues() {
		parent := s
		for _, p := range tv.path[:len(tv.path)-1] {
			parent = child(parent, p)
		}
		props := parent["properties"].(map[string]any)
		last := tv.path[len(tv.path)-1]
		existing, _ := props[last].(map[string]any)
		enums, keys, minItems, ranges := configSchemaEnums(t, root)
		g := schemaGen{tag: tv.tag, t: t, enums: enums, keys: keys, minItems: minItems, ranges: ranges}
		props[last] = g.node(existing, tv.typ, strings.Join(tv.path, "."), 0)
	}
	for _, open := range openObjects(s, "") {
		t.Errorf("%s: an object that accepts unknown keys; add additionalProperties: false", open)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		if err := os.WriteFile(filepath.Join(root, schemaPath), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(buf.Bytes(), raw) {
		t.Errorf("%s is not what the Go types say (a configuration key or a Kubernetes field was added, "+
			"removed or renamed): run go test ./helm -run TestValuesSchemaMatchesTypes -update-schema and review the diff", schemaPath)
	}
}

// child returns the schema of property name of an object schema.
func child(s map[string]any, name string) map[string]any {
	return s["properties"].(map[string]any)[name].(map[string]any)
}

// openObjects lists the object schemas under s that accept unknown keys. "global" is Helm's:
// parent charts pass their own values there.
func openObjects(s map[string]any, path string) []string {
	var out []string
	isObject := s["type"] == "object" || s["properties"] != nil
	if _, ok := s["additionalProperties"]; isObject && !ok && path != "/global" {
		out = append(out, path)
	}
	if ap, ok := s["additionalProperties"].(bool); ok && ap {
		out = append(out, path)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			out = append(out, openObjects(props[k].(map[string]any), path+"/"+k)...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, openObjects(items, path+"[]")...)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		out = append(out, openObjects(ap, path+"/*")...)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				out = append(out, openObjects(a.(map[string]any), path+"|")...)
			}
		}
	}
	return out
}

// schemaGen derives a schema node from a Go type, keeping what a hand-written node says about
// it (description, enum, pattern, required, a oneOf for a type with its own decoding).
type schemaGen struct {
	tag   string // "yaml" or "json"
	t     *testing.T
	enums map[string][]any // the words a setting takes, by values path ("config.log.level")
	keys  map[string][]any // the only keys a mapping setting takes, by values path
	// minItems are the fewest entries of the lists the gateway refuses empty, by values path.
	minItems map[string]any
	// ranges are the values a number setting takes (its anyOf: zero or below, or its range),
	// by values path.
	ranges map[string]any
}

// configSchemaEnums are the closed sets of words of the gateway's settings, from its own JSON
// Schema, by values path: config.KEY, with [] for a list's entries and .* for a mapping's values;
// with them the keys of the mappings closed to others, and the lists' minItems.
// A typo in one ("type: validaton" in an interceptor) then fails the chart's rendering, as it
// would fail the gateway in the pod. The second map holds the closed sets of keys of mapping
// settings (the propertyNames of guardrail detectors), which the values schema writes as an
// object with those keys and no other: helm's validator names an unknown key by its place, as
// for a struct, where for propertyNames it names the wrong place.
func configSchemaEnums(t *testing.T, root string) (enums, keys map[string][]any, minItems, ranges map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, gateway.SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	out, keys, minItems, ranges := map[string][]any{}, map[string][]any{}, map[string]any{}, map[string]any{}
	schemawalk.Walk(s, "config", func(n map[string]any, path string) {
		if r, ok := n["anyOf"]; ok && n["type"] == "integer" {
			ranges[path] = r
		}
		if m, ok := n["minItems"]; ok {
			minItems[path] = m
		}
		if e, ok := n["enum"].([]any); ok {
			out[path] = e
		}
		if pn, ok := n["propertyNames"].(map[string]any); ok {
			if e, ok := pn["enum"].([]any); ok {
				keys[path] = e
			}
		}
	})
	if len(out) < 10 {
		t.Fatalf("%s lists %d closed sets: the walk lost them", gateway.SchemaFile, len(out))
	}
	return out, keys, minItems, ranges
}

const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

func (g schemaGen) node(existing map[string]any, typ reflect.Type, path string, depth int) map[string]any {
	if depth > 12 {
		g.t.Fatalf("%s: types nest too deep for the values schema", path)
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if existing == nil {
		existing = map[string]any{}
	}
	if _, ok := existing["oneOf"]; ok { // hand-written for a type that decodes several shapes
		return existing
	}
	nullable := nullableType(existing)
	defer func() {
		if nullable != nil {
			existing["type"] = nullable
		}
	}()
	if leaf := g.leaf(typ); leaf != nil {
		for k, v := range leaf {
			if _, set := existing[k]; !set || k == "type" {
				existing[k] = v
			}
		}
		if e, ok := g.enums[path]; ok {
			existing["enum"] = e
		}
		if r, ok := g.ranges[path]; ok {
			existing["anyOf"] = r
		}
		return existing
	}
	switch typ.Kind() {
	case reflect.Struct:
		return g.object(existing, typ, path, depth)
	case reflect.Slice, reflect.Array:
		items, _ := existing["items"].(map[string]any)
		existing["type"] = "array"
		existing["items"] = g.node(items, typ.Elem(), path+"[]", depth+1)
		if m, ok := g.minItems[path]; ok {
			existing["minItems"] = m
		}
		return existing
	case reflect.Map:
		existing["type"] = "object"
		if keys, ok := g.keys[path]; ok {
			old, _ := existing["properties"].(map[string]any)
			props := map[string]any{}
			for _, k := range keys {
				prev, _ := old[k.(string)].(map[string]any)
				props[k.(string)] = g.node(prev, typ.Elem(), path+".*", depth+1)
			}
			existing["properties"] = props
			existing["additionalProperties"] = false
			return existing
		}
		values, _ := existing["additionalProperties"].(map[string]any)
		existing["additionalProperties"] = g.node(values, typ.Elem(), path+".*", depth+1)
		return existing
	}
	g.t.Fatalf("%s: no schema for Go type %s", path, typ)
	return nil
}

// nullableType returns a hand-written type list that admits null besides the type (a value
// whose default is null, such as networkPolicy.egress), which the generator keeps.
func nullableType(existing map[string]any) []any {
	if types, ok := existing["type"].([]any); ok && slices.Contains(types, any("null")) {
		return types
	}
	return nil
}

// leaf returns the schema of a type that is a single value, nil for a composite one.
func (g schemaGen) leaf(typ reflect.Type) map[string]any {
	switch typ.String() {
	case "time.Duration":
		return map[string]any{"type": "string", "pattern": durationPattern}
	case "resource.Quantity":
		return map[string]any{"type": []any{"string", "number"}}
	case "intstr.IntOrString":
		return map[string]any{"type": []any{"string", "integer"}}
	case "v1.Time", "v1.MicroTime":
		return map[string]any{"type": "string"}
	}
	switch typ.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	}
	return nil
}

func (g schemaGen) object(existing map[string]any, typ reflect.Type, path string, depth int) map[string]any {
	old, _ := existing["properties"].(map[string]any)
	props := map[string]any{}
	g.fields(props, old, typ, path, depth)
	existing["type"] = "object"
	existing["properties"] = props
	existing["additionalProperties"] = false
	if req, ok := existing["required"].([]any); ok {
		kept := slices.DeleteFunc(req, func(r any) bool { _, ok := props[r.(string)]; return !ok })
		existing["required"] = kept
	}
	return existing
}

// fields adds the schema of every field of struct typ to props, following inlined structs.
func (g schemaGen) fields(props, old map[string]any, typ reflect.Type, path string, depth int) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get(g.tag), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") || (f.Anonymous && name == "") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			g.fields(props, old, ft, path, depth)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		prev, _ := old[name].(map[string]any)
		props[name] = g.node(prev, f.Type, path+"."+name, depth+1)
	}
}

// TestSchemaDurationPattern: the schema's duration pattern accepts what Go writes for a
// duration and refuses a bare number, which the gateway would not parse.
func TestSchemaDurationPattern(t *testing.T) {
	re := regexp.MustCompile(durationPattern)
	for _, d := range []time.Duration{30 * time.Second, 1500 * time.Millisecond, 2*time.Hour + 30*time.Minute, 250 * time.Microsecond} {
		if !re.MatchString(d.String()) {
			t.Errorf("%s refused", d)
		}
	}
	for _, bad := range []string{"30", "1 m", "", "10x"} {
		if re.MatchString(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
