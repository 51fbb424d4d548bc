package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
)

const usage = `usage: gateway [command] [flags]

commands:
  serve         run the gateway (default)
  check-config  load and validate the configuration, print every problem
  version       print the version
  pins          write or diff the tool-definition lock file (pins write | pins diff)

Run 'gateway <command> -h' for the command's flags.
`

// Main is the gateway process's body: Run, its error printed, and the exit status the process
// ends with (0, 1, or what an error names, as `pins diff` does for drift).
func Main(ctx context.Context, version string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := Run(ctx, version, args, getenv, stdout, stderr)
	if err == nil {
		return 0
	}
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "gateway:", err)
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// Run is the gateway command without the process: arguments, environment and output are passed
// in so tests can drive every sub-command in-process. version is the build's version, which
// cmd/gateway stamps at link time.
func Run(ctx context.Context, version string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := readConfig("serve", args, getenv, stderr) // serve runs the checks itself
		if err != nil {
			return err
		}
		cfg.version = version
		return serve(ctx, cfg, getenv, stdout, stderr, nil)
	case "check-config":
		cfg, err := loadConfig("check-config", args, getenv, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "configuration OK: %d upstream(s), MCP on %s%s, admin on %s\n",
			len(cfg.Upstreams), cfg.Server.Listen, cfg.Server.Path, cfg.Admin.Listen)
		fmt.Fprint(stdout, cfg.legacyNote())
		return nil
	case "version":
		fmt.Fprintf(stdout, "mcp-gateway %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	case "pins":
		return runPins(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// flagValues are the command-line settings; only those given override the file and env.
type flagValues struct {
	config, listen, adminListen, publicURL, logLevel, logFormat string
	upstreams                                                   []string
	noPrefix, noAuth, force                                     bool
}

// loadConfig is readConfig followed by every check serve makes before it binds a port
// (preflight), reporting every problem at once.
func loadConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	cfg, err := readConfig(name, args, getenv, stderr)
	if err != nil {
		return nil, err
	}
	if err := cfg.preflight(getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readConfig applies the file, then MCPGW_* variables, then flags, then defaults, without
// checking the result.
func readConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	var fv flagValues
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&fv.config, "config", "", "YAML configuration `file`")
	fs.StringVar(&fv.listen, "listen", "", "MCP listener `address` (default :8080)")
	fs.StringVar(&fv.adminListen, "admin-listen", "", "admin listener `address` (default 127.0.0.1:9090)")
	fs.StringVar(&fv.publicURL, "public-url", "", "canonical public `URL` of the MCP endpoint")
	fs.StringVar(&fv.logLevel, "log-level", "", "log `level`: debug, info, warn, error")
	fs.StringVar(&fv.logFormat, "log-format", "", "log `format`: json or text")
	fs.Func("upstream", "backend as `NAME=URL` (repeatable)", func(v string) error {
		fv.upstreams = append(fv.upstreams, v)
		return nil
	})
	fs.BoolVar(&fv.noPrefix, "no-prefix", false, "pass a single backend's names through unchanged")
	fs.BoolVar(&fv.noAuth, "no-auth", false, "serve without authentication (development only)")
	fs.BoolVar(&fv.force, "force", false, "allow --no-auth on a non-loopback listener")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if fv.config == "" {
		fv.config = getenv("MCPGW_CONFIG")
	}
	cfg := newConfig()
	if fv.config != "" {
		if err := loadFile(fv.config, &cfg); err != nil {
			return nil, err
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return nil, err
	}
	if err := fv.apply(&cfg); err != nil {
		return nil, err
	}
	cfg.applyDefaults()
	return &cfg, nil
}

func (fv *flagValues) apply(c *Config) error {
	for _, p := range []struct {
		dst *string
		v   string
	}{
		{&c.Server.Listen, fv.listen}, {&c.Admin.Listen, fv.adminListen},
		{&c.Server.PublicURL, fv.publicURL}, {&c.Log.Level, fv.logLevel}, {&c.Log.Format, fv.logFormat},
	} {
		if p.v != "" {
			*p.dst = p.v
		}
	}
	for _, u := range fv.upstreams {
		if err := addUpstream(c, u); err != nil {
			return err
		}
	}
	c.Namespace.NoPrefix = c.Namespace.NoPrefix || fv.noPrefix
	c.Auth.Disabled = c.Auth.Disabled || fv.noAuth
	c.forceNoAuth = fv.force
	return nil
}
