package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// pinsCommands are the sub-commands of pins, in the order its usage lists them.
func pinsCommands() [4]string { return [4]string{"write", "diff", "approve", "reseal"} }

const pinsUsage = `usage: gateway pins <write|diff|approve|reseal> [flags]

  write    fetch every configured backend's instructions, tools, prompts and resource templates
           and write the lock file (--out, default pins.yaml; "-" for standard output)
  diff     fetch them again and print what changed since the lock file (--pins), classified;
           exit status 3 when anything drifted
  approve  trust-on-first-use backends: pin in the shared store what --backend NAME lists now,
           the items named by --item tool/NAME, prompt/NAME, resourceTemplate/URI, uiResource/URI or
           instructions (repeatable), or without --item its whole lists
  reseal   seal every trust-on-first-use record again under the newest of mrtr.keys

All take the configuration flags of 'gateway serve' (--config, --upstream, …);
'gateway pins <sub-command> --help' lists each one's flags.
`

// exitDrift is the exit status of 'gateway pins diff' when definitions drifted, so that a
// pipeline can tell drift (3) from a failure to fetch or load (1).
const exitDrift = 3

// driftError reports drift with its own exit status.
type driftError struct{ n int }

func (e driftError) Error() string {
	return fmt.Sprintf("pin drift: %d item(s) differ from the lock file", e.n)
}
func (e driftError) ExitCode() int { return exitDrift }

// runPinsCommand is 'gateway pins write' and 'gateway pins diff'.
func runPinsCommand(ctx context.Context, inv invocation, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(inv.stderr, pinsUsage)
		return errors.New("pins: a sub-command is required")
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		fmt.Fprint(inv.stdout, pinsUsage)
		return flag.ErrHelp
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "write":
		return runPinsWrite(ctx, inv, args)
	case "diff":
		return runPinsDiff(ctx, inv, args)
	case "approve":
		return approvePins(ctx, inv, args)
	case "reseal":
		return resealPins(ctx, inv, args)
	}
	fmt.Fprint(inv.stderr, pinsUsage)
	return fmt.Errorf("pins: unknown sub-command %q%s", sub, didYouMean(sub, []string{"write", "diff", "approve", "reseal"}))
}

func runPinsWrite(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("pins write", "Fetch every configured backend's instructions, tools, prompts and resource templates and\n"+
		"write the lock file.", inv)
	cf.noListener = true
	out := cf.fs.String("out", "pins.yaml", "lock `file` to write (\"-\": standard output)")
	if err := cf.parse(args); err != nil {
		return err
	}
	cfg, err := cf.loadToPin(inv.getenv)
	if err != nil {
		return err
	}
	lock, err := fetchPins(ctx, cfg, inv.getenv, "")
	if err != nil {
		return err
	}
	warnInvisible(inv.stderr, lock)
	for _, w := range lock.Shadowing() {
		fmt.Fprintf(inv.stderr, "warning: %s: pinning both approves both\n", w)
	}
	data := lock.Marshal()
	if *out == "-" {
		_, err := inv.stdout.Write(data)
		return err
	}
	if err := writeFileAtomic(*out, data); err != nil {
		return err
	}
	fmt.Fprintf(inv.stdout, "wrote %d pin(s) for %d backend(s) to %s\n", countPins(lock), len(lock.Backends), *out)
	for _, u := range cfg.Upstreams {
		if unpinned(cfg, u.Name) {
			fmt.Fprintf(inv.stdout, "not pinned (pins mode off): %s\n", u.Name)
		}
	}
	return nil
}

func runPinsDiff(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("pins diff", "Fetch the definitions again and print what changed since the lock file, classified;\n"+
		"exit status 3 when anything drifted.", inv)
	cf.noListener = true
	path := cf.fs.String("pins", "", "lock `file` to compare with (required)")
	if err := cf.parse(args); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("pins diff: --pins is required")
	}
	pinned, err := pins.LoadLock(*path)
	if err != nil {
		return err
	}
	cfg, err := cf.loadToPin(inv.getenv)
	if err != nil {
		return err
	}
	current, err := fetchPins(ctx, cfg, inv.getenv, "")
	if err != nil {
		return err
	}
	for _, u := range cfg.Upstreams {
		if unpinned(cfg, u.Name) {
			delete(pinned.Backends, u.Name) // not fetched: not "everything removed"
		}
	}
	drift := pins.Diff(pinned, current)
	if err := pins.WriteDiff(inv.stdout, drift); err != nil {
		return err
	}
	if len(drift) > 0 {
		return driftError{len(drift)}
	}
	return nil
}

// unpinned reports whether pinning is configured and off for the backend (pins.mode or
// pins.backends.NAME.mode off): write and diff leave it out, so a backend no one pins, such as
// one whose tools only a caller's own token may list, does not stop the others' lock file.
func unpinned(cfg *Config, backend string) bool {
	return cfg.Pins != nil && cfg.Pins.ModeFor(backend) == pins.ModeOff
}

// fetchPins asks every configured backend whose pins are not off (only that one, when only is
// set), in configuration order, for its definitions and pins them. Any backend that cannot be fetched, or lists something that cannot be pinned, fails
// the whole command: a lock file or diff that silently leaves a backend out would read as
// "nothing to pin" or "everything removed".
func fetchPins(ctx context.Context, cfg *Config, getenv func(string) string, only string) (*pins.Lock, error) {
	reg, err := operatorRegistry(cfg, getenv)
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	lock := pins.NewLock()
	var errs []error
	for _, u := range cfg.Upstreams {
		if (only != "" && u.Name != only) || (only == "" && unpinned(cfg, u.Name)) {
			continue
		}
		defs, err := reg.Definitions(ctx, u.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.Name, err))
			continue
		}
		lock.Backend(u.Name)
		if defs.Instructions != "" {
			d, err := pins.FromInstructions(defs.Instructions)
			if err == nil {
				err = lock.Add(u.Name, d)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: instructions: %w", u.Name, err))
			}
		}
		for _, l := range []struct {
			kind  pins.Kind
			items []json.RawMessage
		}{
			{pins.KindTool, defs.Tools}, {pins.KindPrompt, defs.Prompts}, {pins.KindResourceTemplate, defs.ResourceTemplates},
			{pins.KindUIResource, defs.UIResources},
		} {
			if err := lock.AddItems(u.Name, l.kind, l.items); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("pins: %w", errors.Join(errs...))
	}
	return lock, nil
}

func countPins(l *pins.Lock) int {
	n := 0
	for _, b := range l.Backends {
		for _, k := range pins.Kinds() {
			n += len(b.Keys(k))
		}
	}
	return n
}

// warnInvisible tells the operator about definitions being pinned with invisible characters:
// pinning them does not make them acceptable (the class is reported whatever the pin says).
func warnInvisible(w io.Writer, l *pins.Lock) {
	for _, name := range l.Names() {
		b := l.Backends[name]
		for _, k := range pins.Kinds() {
			for _, key := range b.Keys(k) {
				d := b.Get(k, key)
				if f := pins.Scan(d.Value); len(f) > 0 {
					fmt.Fprintf(w, "warning: %s %s %q: %d run(s) of invisible characters, first %s at %s\n",
						name, k, key, len(f), f[0].CodePoint, f[0].Path)
				}
			}
		}
	}
}

// writeFileAtomic replaces path with data through a temporary file in the same directory, so a
// reader (or a failed run) never sees half a lock file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".pins-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
