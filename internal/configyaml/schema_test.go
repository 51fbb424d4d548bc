package configyaml

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
	"time"
)

// TestSchemaShape: mappings read into structs are closed at every depth, list entries
// included; defaults, enums and documentation land on their keys; durations are strings.
func TestSchemaShape(t *testing.T) {
	s := Schema(reflect.TypeFor[doc](), "test", SchemaOptions{
		Doc:      func(owner reflect.Type, field string) string { return owner.Name() + "." + field },
		Defaults: map[string]any{"entries[].timeout": 5 * time.Second, "ratio": 0.5},
		Enums:    map[string][]any{"entries[].name": {"a", "b"}, "entries[].headers.*": {"x"}},
		Keys:     map[string][]string{"entries[].headers": {"X-One", "X-Two"}},
	})
	item := s.Properties["entries"].Items
	if item == nil || item.AdditionalProperties == nil || item.AdditionalProperties.Not == nil {
		t.Fatalf("list entries are not closed: %+v", item)
	}
	if got := item.Properties["timeout"]; got.Pattern != DurationPattern || string(got.Default) != `"5s"` || got.Description != "base.Timeout" {
		t.Errorf("entries[].timeout = %+v", got)
	}
	if got := item.Properties["name"].Enum; !reflect.DeepEqual(got, []any{"a", "b"}) {
		t.Errorf("entries[].name enum = %v", got)
	}
	if _, hidden := item.Properties["hidden"]; hidden {
		t.Error("a yaml:\"-\" field is in the schema")
	}
	if got := s.Properties["on"].Default; string(got) != "false" {
		t.Errorf("a boolean without a default: default %s, want false", got)
	}
	if got := s.Properties["entries"].Items.Properties["headers"].AdditionalProperties; got == nil || got.Type != "object" {
		t.Errorf("a map's values: %+v", got)
	}
	// A mapping keyed by a closed set of names refuses other keys, and its values take only the
	// words its enum lists.
	headers := s.Properties["entries"].Items.Properties["headers"]
	if headers.PropertyNames == nil || !reflect.DeepEqual(headers.PropertyNames.Enum, []any{"X-One", "X-Two"}) {
		t.Errorf("entries[].headers keys: %+v", headers.PropertyNames)
	}
	if v := headers.AdditionalProperties; v == nil || !reflect.DeepEqual(v.Enum, []any{"x"}) {
		t.Errorf("entries[].headers values: %+v", v)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

// TestDurationPattern: the schema's duration pattern accepts exactly what time.ParseDuration
// does, on the forms an operator writes and the mistakes one makes.
func TestDurationPattern(t *testing.T) {
	re := regexp.MustCompile(DurationPattern)
	for _, s := range []string{"0", "10s", "1h30m", "250ms", "1.5h", "-1s", "+2m", "300us", "1µs", ".5s", "5.s",
		"", "10", "s", "1d", "10 s", "1h 30m", "ten", "1e3s", "--1s"} {
		_, err := time.ParseDuration(s)
		if re.MatchString(s) != (err == nil) {
			t.Errorf("%q: pattern says %v, time.ParseDuration says %v", s, re.MatchString(s), err)
		}
	}
}

// TestFormatDuration: defaults are written as an operator writes them.
func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{10 * time.Second: "10s", 2 * time.Minute: "2m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 250 * time.Millisecond: "250ms", 24 * time.Hour: "24h", 0: "0s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
