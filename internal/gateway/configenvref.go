package gateway

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// envReference is a shell-style reference to an environment variable, $NAME or ${NAME}, which
// the configuration file keeps as it is written.
const envReference = `\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`

// hintUnexpanded adds to the problems errs reports a hint at each URL setting whose value
// refers to an environment variable ($NAME or ${NAME}): the file does not expand them, so the
// gateway would take the reference itself for the URL. A problem already reported at such a
// setting (a URL that does not parse, say) gets the hint; a setting with none gets one. The
// hint names what does read the environment: a secret's {env: NAME}, and the MCPGW_* variable
// that sets the setting, if any.
func hintUnexpanded(c *Config, errs []error) []error {
	reference := regexp.MustCompile(envReference)
	refs := map[string]string{} // key path → the hint
	var order []string
	walkSettings(reflect.ValueOf(c).Elem(), "", "", func(path, generic string, v reflect.Value) {
		if v.Kind() != reflect.String || !isURLSetting(generic) {
			return
		}
		if ref := reference.FindString(v.String()); ref != "" {
			refs[path] = unexpandedHint(ref, generic)
			order = append(order, path)
		}
	})
	if len(refs) == 0 {
		return errs
	}
	var out []error
	for _, err := range errs {
		for _, e := range configerr.List(err) {
			var ce *configerr.Error
			if errors.As(e, &ce) && refs[ce.Path] != "" {
				hinted := *ce
				hinted.Err = fmt.Errorf("%w (%s)", ce.Err, refs[ce.Path])
				order = slices.DeleteFunc(order, func(p string) bool { return p == ce.Path })
				e = &hinted
			}
			out = append(out, e)
		}
	}
	for _, path := range order {
		out = append(out, configerr.At(path, "%s", refs[path]))
	}
	return out
}

// isURLSetting reports whether the setting at generic key path holds a URL (an issuer, an
// authorization server, a resource identifier, an audience or an endpoint among them), a
// listener's address, or a list of them.
func isURLSetting(generic string) bool {
	key := strings.ToLower(strings.TrimSuffix(generic[strings.LastIndex(generic, ".")+1:], "[]"))
	for _, suffix := range []string{"url", "uri", "issuer", "issuers", "authserver", "resource", "endpoint", "origins", "addrs",
		"audiences", "listen"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// unexpandedHint is the hint for a URL setting at generic key path whose value holds ref.
func unexpandedHint(ref, generic string) string {
	hint := "the configuration does not expand environment variables such as " + ref +
		": write the value itself; a secret is read from the environment as {env: NAME}"
	for _, e := range envVars() {
		switch {
		case e.path == generic:
			hint += ", and " + e.name + " sets " + generic
		case e.path == "" && generic == "upstreams[].url":
			hint += ", and " + e.name + " (NAME=URL,…) adds backends"
		}
	}
	return hint
}

// secretValueReference is a reference to an environment variable in a secret's value that a
// password of random characters does not hold by chance: ${NAME} anywhere, or $NAME as a word
// of its own ("Bearer $TOKEN").
const secretValueReference = `\$\{[A-Za-z_][A-Za-z0-9_]*\}|(^|\s)\$[A-Za-z_][A-Za-z0-9_]*(\s|$)`

// unexpandedSecrets refuses each secret whose value or file refers to an environment variable:
// the file does not expand them, so the gateway would send the reference itself as a backend's
// credential, or seal with it as a key, which anyone who reads the configuration knows, where
// its author meant a value kept in the environment. A value's reference is not quoted: the
// value may be a secret after all.
func unexpandedSecrets(c *Config) []error {
	inValue, inFile := regexp.MustCompile(secretValueReference), regexp.MustCompile(envReference)
	var errs []error
	for _, ref := range c.secretRefs() {
		if inValue.MatchString(ref.s.Value) {
			errs = append(errs, configerr.At(ref.path+".value", "refers to an environment variable ($NAME or ${NAME}), which the "+
				"configuration does not expand: the value would be the reference itself; read the secret from the environment "+
				"as {env: NAME}"))
		}
		if r := inFile.FindString(ref.s.File); r != "" {
			errs = append(errs, configerr.At(ref.path+".file", "the configuration does not expand environment variables such as %s: "+
				"write the path itself; a secret is read from the environment as {env: NAME}", r))
		}
	}
	return errs
}
