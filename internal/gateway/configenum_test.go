package gateway

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
)

// enumWord is a word no closed set of the configuration holds.
const enumWord = "zq-no-such-word"

// closedSet is how a check answers a word outside a closed set: the word, then the words it
// takes ("want off, log or block", "want one of a, b, c").
var closedSet = regexp.MustCompile(`"` + enumWord + `": want (one of )?[\w./-]+(, [\w./-]+)*,? or [\w./-]+($|[ ;(:])`)

// TestClosedSetsInSchema: every string setting whose check takes only a closed set of words
// lists them in the schema (so an editor, and the reference's Type column, say "one of …"
// instead of "string"). Found by setting each string setting of a configuration that uses
// every block to a word no set holds and reading how check-config answers it, so a setting
// added later is covered too.
func TestClosedSetsInSchema(t *testing.T) {
	m, files := newAgreeMutator(t)
	base := m.bases[len(m.bases)-1] + "search:\n  embeddings: {url: \"http://127.0.0.1:1/v1/embeddings\", model: m}\n"
	enums := configEnums()
	decode := func() *Config {
		c := newConfig()
		if err := decodeYAML(strings.NewReader(base), &c); err != nil {
			t.Fatal(err)
		}
		c.applyDefaults()
		return &c
	}
	if err := decode().check(files.getenv, checkSettings); err != nil {
		t.Fatalf("the base is refused: %v", err)
	}
	var paths []string
	collectStrings(reflect.ValueOf(decode()).Elem(), "", &paths)
	closed := 0
	for _, p := range paths {
		c := decode()
		setPath(t, reflect.ValueOf(c).Elem(), p, enumWord)
		for _, e := range configerr.List(c.check(files.getenv, checkSettings)) {
			if got, _ := configerr.PathOf(e); got != p || !closedSet.MatchString(e.Error()) {
				continue
			}
			closed++
			key := regexp.MustCompile(`\[\d+\]`).ReplaceAllString(p, "[]")
			if len(enums[key]) == 0 && !caseInsensitive(t, decode, files, p, e.Error()) {
				t.Errorf("%s takes a closed set of words, and the schema lists none: add it to configEnums\n%v", key, e)
			}
		}
	}
	if closed < 10 {
		t.Errorf("only %d of %d string settings found to take a closed set: the probe finds little", closed, len(paths))
	}
}

// caseInsensitive reports whether the setting at path also takes the first word msg lists in
// upper case (a header name): a schema enum, which is exact, would refuse what the gateway takes.
func caseInsensitive(t *testing.T, decode func() *Config, files agreeFiles, path, msg string) bool {
	t.Helper()
	first := strings.Fields(strings.TrimPrefix(msg[strings.Index(msg, ": want ")+len(": want "):], "one of "))[0]
	c := decode()
	setPath(t, reflect.ValueOf(c).Elem(), path, strings.ToUpper(strings.TrimSuffix(first, ",")))
	for _, e := range configerr.List(c.check(files.getenv, checkSettings)) {
		if got, _ := configerr.PathOf(e); got == path {
			return false
		}
	}
	return true
}

// collectStrings lists the key paths of the string settings under v, the first entry of each
// list included (maps' entries are not: their keys are the operator's).
func collectStrings(v reflect.Value, path string, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectStrings(v.Elem(), path, out)
		}
	case reflect.Struct:
		if v.Type() == secretType {
			return
		}
		for _, f := range configyaml.Fields(v.Type()) {
			collectStrings(v.FieldByIndex(f.Index), join(path, f.Key), out)
		}
	case reflect.Slice:
		if v.Len() > 0 {
			collectStrings(v.Index(0), path+"[0]", out)
		}
	case reflect.String:
		*out = append(*out, path)
	}
}

// setPath sets the string setting at path (as collectStrings writes it) under v to s.
func setPath(t *testing.T, v reflect.Value, path, s string) {
	t.Helper()
	for part := range strings.SplitSeq(path, ".") {
		name, idx, list := strings.Cut(part, "[")
		for v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		i := -1
		for _, f := range configyaml.Fields(v.Type()) {
			if f.Key == name {
				v = v.FieldByIndex(f.Index)
				i = 0
				break
			}
		}
		if i < 0 {
			t.Fatalf("%s: no setting %s", path, name)
		}
		if list {
			for range strings.Count("["+idx, "[") {
				v = v.Index(0)
			}
		}
	}
	v.SetString(s)
}
