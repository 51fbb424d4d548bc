package gateway

//go:generate go run ../tools/configdocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/configyaml"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mcphttp/pre2026"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The files ConfigDocs writes, relative to the repository's root.
const (
	SchemaFile    = "docs/config.schema.json"
	ReferenceFile = "docs/configuration.md"
)

// module is this module's path, under which the configuration's packages are found in the
// source tree.
const module = "github.com/mcp-gateway/gateway"

// ConfigDocs generates, from the configuration's Go types, their doc comments (read from the
// source under root, the repository) and the defaults the code applies, the files that describe
// the configuration file: its JSON Schema, which editors use to validate and complete it, and
// the reference of every setting. `go generate ./internal/gateway` writes them; a test checks
// that the files in the repository are what this returns.
func ConfigDocs(root string) (map[string][]byte, error) {
	docs, err := configyaml.ReadDocs(reflect.TypeFor[Config](), module, root)
	if err != nil {
		return nil, err
	}
	s := configSchema(docs)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		SchemaFile:    append(b, '\n'),
		ReferenceFile: configReference(s),
	}, nil
}

// configSchema is the JSON Schema of the configuration file.
func configSchema(docs configyaml.Docs) *jsonschema.Schema {
	s := configyaml.Schema(reflect.TypeFor[Config](), "mcp-gateway configuration", configyaml.SchemaOptions{
		Doc:      docs.Field,
		Defaults: configDefaults(),
		Enums:    configEnums(),
		Keys:     configKeys(),
		Types:    schemaTypes(),
	})
	documentRanges(s, "", configRanges())
	s.ID = "https://github.com/mcp-gateway/gateway/" + SchemaFile
	s.Description = "The YAML configuration of mcp-gateway (gateway serve --config FILE). Generated from the Go types by go generate ./internal/gateway; see " + ReferenceFile + "."
	return s
}

// configEnums are the settings that take one of a closed set of values, from the sets the
// checks accept.
func configEnums() map[string][]any {
	strs := func(v ...string) []any {
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	}
	modes := strs(string(pins.ModeLockfile), string(pins.ModeTOFU), string(pins.ModeOff))
	dpopModes := strs(authz.DPoPOff, authz.DPoPAllowed, authz.DPoPRequired)
	return map[string][]any{
		"log.level":                                     strs(logLevels()...),
		"log.format":                                    strs(logFormats()...),
		"admin.redisReadiness":                          strs(redisReadinessRequired, redisReadinessAdvisory),
		"auth.issuers[].algorithms[]":                   strs(authz.DefaultAlgorithms()...),
		"auth.policy.rules[].effect":                    strs(authz.EffectAllow, authz.EffectDeny),
		"auth.policy.rules[].confirmFallback":           strs(authz.FallbackClientForm),
		"auth.policy.rules[].dpop":                      strs(authz.DPoPRequired),
		"auth.issuers[].dpop":                           dpopModes,
		"auth.dpop.mode":                                dpopModes,
		"auth.dpop.algorithms[]":                        strs(dpop.DefaultAlgorithms()...),
		"upstreams[].protocol":                          strs(upstreams.ProtocolChoices()...),
		"interceptors[].type":                           strs(intercept.TypeValidation, intercept.TypeMutation),
		"interceptors[].mode":                           strs(intercept.ModeActive, intercept.ModeAudit),
		"interceptors[].rules[].phases[]":               strs(intercept.PhaseNameRequest, intercept.PhaseNameResponse),
		"search.embeddings.fusion":                      strs(embeddings.FusionRRF, embeddings.FusionBlend),
		"upstreams[].auth.type":                         strs(upstreams.AuthClientCredentials, upstreams.AuthTokenExchange, upstreams.AuthUserOAuth),
		"upstreams[].auth.registration":                 strs(string(useroauth.RegistrationStatic), string(useroauth.RegistrationMetadataDocument), string(useroauth.RegistrationDynamic)),
		"legacy.versions[]":                             strs(pre2026.DefaultLegacyVersions()...),
		"server.draftErrors[]":                          strs(mcphttp.DraftErrorNames()...),
		"pins.mode":                                     modes,
		"pins.backends.*.mode":                          modes,
		"guardrails.rules[].validate.arguments":         strs(guardrails.SchemaActions()...),
		"guardrails.rules[].validate.structuredContent": strs(guardrails.SchemaActions()...),
		"guardrails.rules[].arguments.secrets":          strs(guardrails.ArgumentActions()...),
		"guardrails.rules[].arguments.pii":              strs(guardrails.ArgumentActions()...),
		"guardrails.rules[].arguments.injection":        strs(guardrails.Off.String()), // results only
		"guardrails.rules[].results.secrets":            strs(guardrails.ResultActions()...),
		"guardrails.rules[].results.pii":                strs(guardrails.ResultActions()...),
		"guardrails.rules[].results.injection":          strs(guardrails.ResultActions()...),
		"guardrails.rules[].arguments.detectors.*":      strs(guardrails.ArgumentActions()...),
		"guardrails.rules[].results.detectors.*":        strs(guardrails.ResultActions()...),
	}
}

// configKeys are the mapping settings keyed by names of a closed set: the detectors a
// guardrail rule sets one by one.
func configKeys() map[string][]string {
	detectors := guardrails.ContentDetectors()
	return map[string][]string{
		"guardrails.rules[].arguments.detectors": detectors,
		"guardrails.rules[].results.detectors":   detectors,
	}
}

// schemaTypes are the schemas of the values whose Go type says too little.
func schemaTypes() map[reflect.Type]*jsonschema.Schema {
	str := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: desc} }
	one := 1
	var classes, actions []any
	for _, c := range pins.AllClasses() {
		classes = append(classes, string(c))
	}
	for _, a := range []pins.Action{pins.ActionBlock, pins.ActionConfirm, pins.ActionLog} {
		actions = append(actions, string(a))
	}
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Secret](): {
			Type:        "object",
			Description: "A secret: exactly one of file (a path whose contents are the secret), env (a variable holding it) or, for development, value (the secret itself).",
			Properties: map[string]*jsonschema.Schema{
				"file":  str("A file whose contents, trailing newline trimmed, are the secret (a mounted Kubernetes Secret, say)."),
				"env":   str("An environment variable holding the secret."),
				"value": str("The secret itself: for development only."),
			},
			PropertyOrder:        []string{"file", "env", "value"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			MinProperties:        &one,
			MaxProperties:        &one,
		},
		reflect.TypeFor[authz.ConfirmMode](): {
			Description: "true (or form): the user confirms in a form the client shows; url: on the gateway's approval page; false: no confirmation.",
			OneOf:       []*jsonschema.Schema{{Type: "boolean"}, {Type: "string", Enum: []any{"true", "false", "form", "url"}}},
		},
		reflect.TypeFor[map[pins.Class]pins.Action](): {
			Type:                 "object",
			PropertyNames:        &jsonschema.Schema{Enum: classes},
			AdditionalProperties: &jsonschema.Schema{Type: "string", Enum: actions},
		},
	}
}

// configReference is docs/configuration.md: every setting with its type, default and
// documentation, in the order of the file, from the schema.
func configReference(s *jsonschema.Schema) []byte {
	var b strings.Builder
	b.WriteString(`# Configuration reference

<!-- Generated by go generate ./internal/gateway from the Go types, their doc comments and the
defaults the code applies. Do not edit: edit the comments in the code and regenerate. -->

Every setting of the YAML file ` + "`gateway serve --config FILE`" + ` reads, with its type, its default and
what it does. Unknown keys are errors. A key path such as ` + "`upstreams[].timeout`" + ` is the key
` + "`timeout`" + ` of every entry of the ` + "`upstreams`" + ` list; ` + "`headers.*`" + ` is any key of that mapping.
A *secret* is written ` + "`{file: PATH}`" + `, ` + "`{env: NAME}`" + ` or, for development, ` + "`{value: …}`" + ` (a
relative PATH, as every file setting's, is read from the gateway's working directory, not the
configuration file's: ` + "`gateway check-config`" + ` run elsewhere reads other files); a
*duration* as ` + "`250ms`" + `, ` + "`30s`" + `, ` + "`5m`" + ` or ` + "`1h30m`" + `. The file does not expand environment
variables: a URL, audience or listener setting, or a secret's value or file, holding ` + "`$NAME`" + ` or ` + "`${NAME}`" + ` is
refused (a secret's value when it holds ` + "`${NAME}`" + `, or ` + "`$NAME`" + ` as a word of its own); a secret reads the environment as
` + "`{env: NAME}`" + `, and the ` + "`MCPGW_*`" + ` variables set the settings they name (` + "`gateway serve --help`" + `).
A number or duration setting documented with a range takes, besides 0 (and a negative value where
its documentation gives one a meaning), only a value in that range.

The machine-readable form is [config.schema.json](config.schema.json) (JSON Schema 2020-12):
point an editor at it, for example with a first line
` + "`# yaml-language-server: $schema=https://raw.githubusercontent.com/mcp-gateway/gateway/main/docs/config.schema.json`" + `.
A commented starter configuration is [examples/gateway.yaml](examples/gateway.yaml).

| Key | Type | Default | Meaning |
|---|---|---|---|
`)
	referenceRows(&b, s, "")
	return []byte(b.String())
}

func referenceRows(b *strings.Builder, s *jsonschema.Schema, path string) {
	for _, key := range s.PropertyOrder {
		p := s.Properties[key]
		kp := key
		if path != "" {
			kp = path + "." + key
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", kp, typeName(p), defaultText(p), cell(p.Description))
		switch {
		case len(p.Properties) > 0 && p.MaxProperties == nil:
			referenceRows(b, p, kp)
		case p.Items != nil && len(p.Items.Properties) > 0:
			referenceRows(b, p.Items, kp+"[]")
		case p.AdditionalProperties != nil && len(p.AdditionalProperties.Properties) > 0 && p.AdditionalProperties.MaxProperties == nil:
			referenceRows(b, p.AdditionalProperties, kp+".*")
		}
	}
}

// typeName says in words what a setting holds.
func typeName(s *jsonschema.Schema) string {
	switch {
	case s.MaxProperties != nil:
		return "secret"
	case s.Pattern == configyaml.DurationPattern:
		return "duration"
	case len(s.OneOf) > 0:
		return "boolean or string"
	case s.Type == "array" && s.Items != nil:
		switch {
		case len(s.Items.Properties) > 0:
			return "list of blocks"
		case len(s.Items.Enum) > 0:
			return "list, each " + typeName(s.Items)
		}
		return "list of " + typeName(s.Items) + "s"
	case s.Type == "object" && len(s.Properties) > 0:
		return "block"
	case s.Type == "object" && s.AdditionalProperties != nil:
		return "map to " + typeName(s.AdditionalProperties)
	case len(s.Enum) > 0:
		return "one of " + strings.Join(enumTexts(s.Enum), ", ")
	case s.Type == "":
		return "any value" // a setting passed on as it is written (an interceptor's config)
	}
	return s.Type
}

func enumTexts(e []any) []string {
	out := make([]string, len(e))
	for i, v := range e {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// defaultText is a setting's default as the file writes it, or "" without one.
func defaultText(s *jsonschema.Schema) string {
	if len(s.Default) == 0 {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(s.Default))
	dec.UseNumber() // 4194304, not 4.194304e+06
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	return "`" + flow(v) + "`"
}

// flow writes v in YAML flow style.
func flow(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, ":{}[],#&*!|>'\"%@`") {
			return fmt.Sprintf("%q", x)
		}
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = flow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + flow(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// configDocsRoot is the repository's root seen from this package's directory, where go
// generate and go test run.
const configDocsRoot = "../.."
