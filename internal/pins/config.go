package pins

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Action is what the gateway does with an item that drifted.
type Action string

// The actions, from the strongest.
const (
	// ActionBlock: the item is left out of lists and calls to it are refused with an error that
	// names pin drift; nothing is forwarded to the backend.
	ActionBlock Action = "block"
	// ActionConfirm: each call goes through the gateway's confirmation, whose message says the
	// item changed since it was pinned and how.
	ActionConfirm Action = "confirm"
	// ActionLog: the item is served as listed; the drift is logged and counted.
	ActionLog Action = "log"
)

func (a Action) rank() int {
	switch a {
	case ActionBlock:
		return 3
	case ActionConfirm:
		return 2
	case ActionLog:
		return 1
	}
	return 0
}

// Stronger reports whether a calls for more than b (block over confirm over log over none).
func (a Action) Stronger(b Action) bool { return a.rank() > b.rank() }

// Mode is where pins come from.
type Mode string

const (
	// ModeLockfile: pins are read from the lock file (pins.yaml) written by
	// 'gateway pins write' and reviewed by a human; every replica loads the same file.
	ModeLockfile Mode = "lockfile"
	// ModeTOFU: trust on first use. The first definition any replica sees is pinned in the
	// shared store; later changes are drift.
	ModeTOFU Mode = "tofu"
	// ModeOff: the backend's definitions are neither pinned nor checked.
	ModeOff Mode = "off"
)

// DefaultAction is the action for class c when the configuration names none (false for a
// class it does not know): block what may
// widen what a tool does or lowers a client's caution, hides text, or changes text the model
// reads (a confirmed item is listed as sent, and a poisoned description acts through the
// model before any call); hold new items until they are pinned; ask for confirmation of the
// changes the model does not read (icons, the rest); log what narrows.
func DefaultAction(c Class) (Action, bool) {
	switch c {
	case ClassNew, ClassUnverified, ClassShadows, ClassInvisible, ClassInputSchemaWidened, ClassDestructiveHintCleared, ClassReadOnlyHintSet, ClassIdempotentHintSet, ClassOpenWorldHintSet, ClassUIChanged, ClassTextChanged, ClassOutputSchemaChanged:
		return ActionBlock, true
	case ClassRemoved, ClassInputSchemaNarrowed, ClassAnnotationsChanged:
		return ActionLog, true
	case ClassIconsChanged, ClassOtherChanged:
		return ActionConfirm, true
	}
	return "", false
}

// DefaultActions is DefaultAction for every class, as a map of its own (a caller may change it).
func DefaultActions() map[Class]Action {
	all := AllClasses()
	m := make(map[Class]Action, len(all))
	for _, c := range all {
		if a, ok := DefaultAction(c); ok {
			m[c] = a
		}
	}
	return m
}

// Config is the pinning configuration (the gateway configuration's "pins" section).
type Config struct {
	// Mode is the default source of pins for every backend: "lockfile" (the default), "tofu"
	// or "off".
	Mode Mode `yaml:"mode"`
	// LockFile is the path of the pins.yaml lock file; required when any backend is in
	// lockfile mode. A backend in tofu mode that it has a section for pins that section at
	// first contact, rather than its list.
	LockFile string `yaml:"lockFile"`
	// Actions overrides DefaultActions for every backend, per class: "block", "confirm" or
	// "log".
	Actions map[Class]Action `yaml:"actions"`
	// Backends overrides Mode and Actions per backend, keyed by the backend's configured name.
	Backends map[string]BackendConfig `yaml:"backends"`
	// MaxPerBackend bounds, per backend and kind (tools, prompts, resource templates), the
	// items pinned on first use and the drift records kept (GET /pins); items beyond it are
	// not pinned (they stay new) and not listed individually. Default DefaultMaxPerBackend.
	MaxPerBackend int `yaml:"maxPerBackend"`
	// MaxBytesPerBackend bounds, per backend and kind, the canonical text pinned on first use,
	// in bytes. Default DefaultMaxBytesPerBackend.
	MaxBytesPerBackend int `yaml:"maxBytesPerBackend"`
	// Retention is how long an item that is no longer listed stays in the drift records (GET
	// /pins, /readyz) as removed before it is dropped from them; its pin stays. Default
	// DefaultRetention.
	Retention time.Duration `yaml:"retention"`
	// RestoreWindow is how long, in tofu mode with a shared store, a backend's first contact
	// waits after the store's memory began (a new store, or one that lost its data) so that the
	// replicas holding pins it forgot write them back first; its items are unverified
	// meanwhile. Default DefaultRestoreWindow; a negative value: no wait (a first contact pins at
	// once, also in a store that lost its data while replicas held its pins).
	RestoreWindow time.Duration `yaml:"restoreWindow"`
}

// Defaults of the bounds.
const (
	// DefaultMaxPerBackend is Config.MaxPerBackend's default.
	DefaultMaxPerBackend = 2048
	// DefaultMaxBytesPerBackend is Config.MaxBytesPerBackend's default: 4 MiB.
	DefaultMaxBytesPerBackend = 4 << 20
	// DefaultRetention is Config.Retention's default: a week.
	DefaultRetention = 7 * 24 * time.Hour
	// DefaultRestoreWindow is Config.RestoreWindow's default.
	DefaultRestoreWindow = 30 * time.Second
)

// maxPins returns the effective MaxPerBackend.
func (c *Config) maxPins() int {
	if c.MaxPerBackend > 0 {
		return c.MaxPerBackend
	}
	return DefaultMaxPerBackend
}

// maxPinBytes returns the effective MaxBytesPerBackend.
func (c *Config) maxPinBytes() int {
	if c.MaxBytesPerBackend > 0 {
		return c.MaxBytesPerBackend
	}
	return DefaultMaxBytesPerBackend
}

// retention returns the effective Retention.
func (c *Config) retention() time.Duration {
	if c.Retention > 0 {
		return c.Retention
	}
	return DefaultRetention
}

// restoreWindow returns the effective RestoreWindow: 0 for no wait.
func (c *Config) restoreWindow() time.Duration {
	switch {
	case c.RestoreWindow < 0:
		return 0
	case c.RestoreWindow > 0:
		return c.RestoreWindow
	}
	return DefaultRestoreWindow
}

// MaxSealedBytes is the largest sealed record of trust-on-first-use pins a store may hold for
// c: one backend's record holds every kind, each the canonical text of MaxBytesPerBackend and
// its member names, with room for the record's framing and the seal's base64 encoding.
func (c *Config) MaxSealedBytes() int {
	return numKinds*(c.maxPinBytes()+c.maxPins()*256+4096)*4/3 + 1024
}

// BackendConfig is one backend's overrides.
type BackendConfig struct {
	// Mode, when set, replaces Config.Mode for this backend.
	Mode Mode `yaml:"mode"`
	// Actions, per class, replace Config.Actions and DefaultActions for this backend.
	Actions map[Class]Action `yaml:"actions"`
}

// Validate reports every problem at once: unknown modes, classes or actions, overrides for a
// backend that is not configured (when backends is non-nil), and a missing lock file path
// where lockfile mode needs one. Each is a *configerr.Error naming the setting's key path in
// the gateway's configuration file (pins.backends.github.mode).
func (c *Config) Validate(backends []string) error {
	var errs []error
	checkMode := func(where string, m Mode) {
		if m != "" && m != ModeLockfile && m != ModeTOFU && m != ModeOff {
			errs = append(errs, configerr.At(where, "unknown mode %q: want lockfile, tofu or off", m))
		}
	}
	checkActions := func(where string, acts map[Class]Action) {
		classes := make([]string, 0, len(acts))
		for cl := range acts {
			classes = append(classes, string(cl))
		}
		sort.Strings(classes)
		for _, cl := range classes {
			if !Class(cl).Valid() {
				errs = append(errs, configerr.At(where+"."+cl, "unknown class %q: want one of %s", cl, classNames()))
			}
			if Class(cl) == ClassUnverified {
				errs = append(errs, configerr.At(where+"."+cl, "is always block: what cannot be verified is never served"))
			}
			if a := acts[Class(cl)]; a.rank() == 0 {
				errs = append(errs, configerr.At(where+"."+cl, "unknown action %q: want block, confirm or log", a))
			}
		}
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"maxPerBackend", c.MaxPerBackend < 0}, {"maxBytesPerBackend", c.MaxBytesPerBackend < 0}, {"retention", c.Retention < 0}} {
		if f.neg {
			errs = append(errs, configerr.At("pins."+f.key, "must not be negative"))
		}
	}
	checkMode("pins.mode", c.Mode)
	checkActions("pins.actions", c.Actions)
	known := map[string]bool{}
	for _, b := range backends {
		known[b] = true
	}
	names := make([]string, 0, len(c.Backends))
	for n := range c.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		where := fmt.Sprintf("pins.backends.%s", n)
		if backends != nil && !known[n] {
			errs = append(errs, configerr.At(where, "no such backend: want the name of one of upstreams"))
		}
		checkMode(where+".mode", c.Backends[n].Mode)
		checkActions(where+".actions", c.Backends[n].Actions)
	}
	if c.LockFile == "" {
		for _, b := range append(append([]string(nil), backends...), names...) {
			if c.ModeFor(b) == ModeLockfile {
				errs = append(errs, configerr.At("pins.lockFile", "required: backend %q is in lockfile mode (the default mode)", b))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// ModeFor returns the backend's mode.
func (c *Config) ModeFor(backend string) Mode {
	if m := c.Backends[backend].Mode; m != "" {
		return m
	}
	if c.Mode != "" {
		return c.Mode
	}
	return ModeLockfile
}

// AnyTOFU reports whether one of backends is pinned on first use.
func (c *Config) AnyTOFU(backends []string) bool {
	return slices.ContainsFunc(backends, func(b string) bool { return c.ModeFor(b) == ModeTOFU })
}

// LoadsLock reports whether the lock file is read for backends: when one of them is pinned
// from it, or, a lock file being configured, pinned on first use (its first contact takes the
// lock file's section when there is one, Guard).
func (c *Config) LoadsLock(backends []string) bool {
	return slices.ContainsFunc(backends, func(b string) bool {
		m := c.ModeFor(b)
		return m == ModeLockfile || m == ModeTOFU && c.LockFile != ""
	})
}

// ActionForClass returns the action for one class on a backend: the backend's override, the
// global override, or the default.
func (c *Config) ActionForClass(backend string, cl Class) Action {
	if cl == ClassUnverified {
		return ActionBlock
	}
	if a, ok := c.Backends[backend].Actions[cl]; ok {
		return a
	}
	if a, ok := c.Actions[cl]; ok {
		return a
	}
	if a, ok := DefaultAction(cl); ok {
		return a
	}
	return ActionBlock // fail closed on a class without a default
}

// ActionFor returns the strongest action any class in s calls for on backend (block over
// confirm over log); ok is false when s is empty.
func (c *Config) ActionFor(backend string, s Set) (a Action, ok bool) {
	for _, cl := range s.Classes() {
		if x := c.ActionForClass(backend, cl); x.rank() > a.rank() {
			a = x
		}
	}
	return a, a != ""
}

// classNames lists the classes an action may be set for, for an error message.
func classNames() string {
	all := AllClasses()
	names := make([]string, len(all))
	for i, c := range all {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// Fits reports whether a manifest an operator approves stays within MaxPerBackend and
// MaxBytesPerBackend.
func (c *Config) Fits(m *Manifest) error {
	size := 0
	for k, d := range m.Pins {
		size += len(k) + len(d.Canonical)
	}
	if len(m.Pins) > c.maxPins() || size > c.maxPinBytes() {
		return fmt.Errorf("%d %s pin(s) of %s, %d bytes: more than pins.maxPerBackend (%d) or pins.maxBytesPerBackend (%d)",
			len(m.Pins), m.Kind, m.Backend, size, c.maxPins(), c.maxPinBytes())
	}
	return nil
}
