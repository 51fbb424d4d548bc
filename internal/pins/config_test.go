package pins

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestDefaultActions(t *testing.T) {
	for _, c := range AllClasses() {
		if _, ok := DefaultAction(c); !ok {
			t.Errorf("class %s has no default action", c)
		}
	}
	if _, ok := DefaultAction("bogus"); ok {
		t.Error("a default action for a class that does not exist")
	}
	// The defaults, the classes and the kinds are values no caller can change for another.
	m := DefaultActions()
	if len(m) != numClasses {
		t.Errorf("DefaultActions has %d classes, want %d", len(m), numClasses)
	}
	m[ClassNew] = ActionLog
	classes, kinds := AllClasses(), Kinds()
	classes[0], kinds[0] = ClassOtherChanged, "bogus"
	if a, _ := DefaultAction(ClassNew); a != ActionBlock || DefaultActions()[ClassNew] != ActionBlock ||
		(&Config{}).ActionForClass("any", ClassNew) != ActionBlock || AllClasses()[0] != ClassNew ||
		Kinds()[0] != KindInstructions || Kind("bogus").Valid() || !KindInstructions.Valid() {
		t.Error("a caller's copy of the defaults, the classes or the kinds changed them for everyone")
	}
	var c Config
	want := map[Class]Action{
		ClassInputSchemaWidened: ActionBlock, ClassDestructiveHintCleared: ActionBlock, ClassReadOnlyHintSet: ActionBlock,
		ClassOpenWorldHintSet: ActionBlock, ClassInvisible: ActionBlock, ClassNew: ActionBlock, ClassTextChanged: ActionBlock,
		ClassOutputSchemaChanged: ActionBlock, ClassIconsChanged: ActionConfirm, ClassOtherChanged: ActionConfirm,
	}
	for cl, a := range want {
		if got := c.ActionForClass("any", cl); got != a {
			t.Errorf("%s: %s, want %s", cl, got, a)
		}
	}
	if c.ModeFor("any") != ModeLockfile {
		t.Error("default mode is not lockfile")
	}
}

func TestActionFor(t *testing.T) {
	c := Config{
		Actions: map[Class]Action{ClassTextChanged: ActionLog, ClassNew: ActionLog},
		Backends: map[string]BackendConfig{
			"strict": {Mode: ModeTOFU, Actions: map[Class]Action{ClassTextChanged: ActionBlock}},
		},
	}
	cases := []struct {
		backend string
		s       Set
		want    Action
	}{
		{"web", classes(ClassTextChanged), ActionLog},
		{"strict", classes(ClassTextChanged), ActionBlock},
		{"web", classes(ClassTextChanged, ClassIconsChanged), ActionConfirm},
		{"web", classes(ClassTextChanged, ClassOutputSchemaChanged), ActionBlock},
		{"web", classes(ClassTextChanged, ClassInputSchemaWidened), ActionBlock},
		{"web", classes(ClassNew), ActionLog},
		{"strict", classes(ClassNew), ActionLog},
	}
	for _, tc := range cases {
		if got, ok := c.ActionFor(tc.backend, tc.s); !ok || got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.backend, tc.s, got, tc.want)
		}
	}
	if _, ok := c.ActionFor("web", 0); ok {
		t.Error("empty set has an action")
	}
	if c.ModeFor("strict") != ModeTOFU || c.ModeFor("web") != ModeLockfile {
		t.Error("per-backend mode")
	}
}

func TestConfigValidate(t *testing.T) {
	src := `
mode: sometimes
actions:
  text-changed: allow
  rug-pull: block
backends:
  ghost:
    mode: tofu
  web:
    actions:
      new: log
      icons-changed: warn
`
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	err := c.Validate([]string{"web", "files"})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`pins.mode: unknown mode "sometimes"`,
		`pins.actions.rug-pull: unknown class "rug-pull": want one of new, `,
		`pins.actions.text-changed: unknown action "allow"`,
		`pins.backends.ghost: no such backend`,
		`pins.backends.web.actions.icons-changed: unknown action "warn"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	ok := Config{Mode: ModeTOFU, Backends: map[string]BackendConfig{"web": {Actions: map[Class]Action{ClassNew: ActionLog}}}}
	if err := ok.Validate([]string{"web"}); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
	if err := (&Config{}).Validate([]string{"web"}); err == nil || !strings.Contains(err.Error(), "pins.lockFile: required") {
		t.Errorf("lockfile mode without a file: %v", err)
	}
	lf := Config{LockFile: "pins.yaml"}
	if err := lf.Validate([]string{"web"}); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}

// TestConfigUnverifiedAlwaysBlocks: what cannot be verified is never served, whatever the
// configuration says: configuring the class is refused, and its action is block regardless.
func TestConfigUnverifiedAlwaysBlocks(t *testing.T) {
	c := Config{Mode: ModeTOFU, Actions: map[Class]Action{ClassUnverified: ActionLog}, MaxPerBackend: -1}
	err := c.Validate([]string{"be"})
	if err == nil || !strings.Contains(err.Error(), "pins.actions.unverified: is always block") || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("Validate: %v", err)
	}
	if a := c.ActionForClass("be", ClassUnverified); a != ActionBlock {
		t.Errorf("unverified: %s", a)
	}
	if a := (&Config{}).ActionForClass("be", ClassShadows); a != ActionBlock {
		t.Errorf("shadows by default: %s", a)
	}
}

// TestConfigFits: what an operator approves stays within the same bounds as first contact.
func TestConfigFits(t *testing.T) {
	m := &Manifest{Backend: "be", Kind: KindTool, Pins: map[string]*Definition{}}
	for _, n := range []string{"a", "b", "c"} {
		m.Pins[n] = def(t, KindTool, `{"name":"`+n+`","description":"A tool."}`)
	}
	if err := (&Config{}).Fits(m); err != nil {
		t.Errorf("default bounds: %v", err)
	}
	if err := (&Config{MaxPerBackend: 2}).Fits(m); err == nil {
		t.Error("three pins within maxPerBackend 2")
	}
	if err := (&Config{MaxBytesPerBackend: 64}).Fits(m); err == nil {
		t.Error("three pins within 64 bytes")
	}
}
