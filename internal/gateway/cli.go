package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
)

// invocation is what a sub-command runs with: the build's version, the environment and the
// output streams, passed in so tests drive every sub-command in-process.
type invocation struct {
	version        string
	getenv         func(string) string
	stdout, stderr io.Writer
}

// command is one sub-command of the gateway binary.
type command struct {
	name string
	// summary is its line in `gateway help`.
	summary string
	run     func(ctx context.Context, inv invocation, args []string) error
}

// commands lists every sub-command, in the order `gateway help` shows them.
func commands() []command {
	return []command{
		{"serve", "run the gateway (the default command)", runServe},
		{"check-config", "check the configuration as serve does before it starts; print every problem", runCheckConfig},
		{"pins", "tool-definition pins: write or diff the lock file, approve or reseal trust-on-first-use pins", runPinsCommand},
		{"version", "print the version", runVersion},
		{"help", "print this help, or a command's own: gateway help <command>", nil},
	}
}

// Main is the gateway process's body: Run, its error printed, and the exit status the process
// ends with (0, 1, or what an error names, as `pins diff` does for drift).
func Main(ctx context.Context, version string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := Run(ctx, version, args, getenv, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0 // help was asked for and printed
	}
	// Whatever failed, a configuration error or one from a client that repeats the URL it was
	// sent to, the URLs it quotes are shown without their credentials (configerr.URL).
	fmt.Fprintln(stderr, "gateway:", configerr.RedactURLs(err.Error()))
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// Run is the gateway command without the process: arguments, environment and output are passed
// in so tests can drive every sub-command in-process. version is the build's version, which
// cmd/gateway stamps at link time. Without a command, or with flags first, it serves.
func Run(ctx context.Context, version string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	inv := invocation{version: version, getenv: getenv, stdout: stdout, stderr: stderr}
	switch {
	case len(args) == 0:
		return runServe(ctx, inv, nil)
	case args[0] == "help" || isHelpFlag(args[0]):
		return inv.help(args[1:])
	case args[0] == "--version" || args[0] == "-version":
		return runVersion(ctx, inv, args[1:])
	case strings.HasPrefix(args[0], "-"):
		return runServe(ctx, inv, args)
	}
	for _, c := range commands() {
		if c.name == args[0] && c.run != nil {
			return c.run(ctx, inv, args[1:])
		}
	}
	fmt.Fprint(stderr, mainUsage())
	return fmt.Errorf("unknown command %q%s", args[0], didYouMean(args[0], commandNames()))
}

// help prints the command list, or with a command name that command's own usage.
func (inv invocation) help(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(inv.stdout, mainUsage())
		return nil
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		fmt.Fprint(inv.stdout, mainUsage())
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] && c.run != nil {
			return c.run(context.Background(), inv, append(args[1:], "--help"))
		}
	}
	return fmt.Errorf("help: unknown command %q%s", args[0], didYouMean(args[0], commandNames()))
}

func mainUsage() string {
	var b strings.Builder
	b.WriteString("usage: gateway [command] [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-13s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'gateway <command> --help' (or 'gateway help <command>') for a command's own flags.\n" +
		"Configuration comes from the YAML file (--config or MCPGW_CONFIG), then MCPGW_* environment\n" +
		"variables, then flags.\n")
	return b.String()
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

func isHelpFlag(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "--h" }

func runServe(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("serve", "Run the gateway: the MCP listener and the admin listener, until SIGTERM or SIGINT, then drain.", inv)
	if err := cf.parse(args); err != nil {
		return err
	}
	// The same file, environment and flags, read and checked again on every SIGHUP (reload.go).
	load := func() (*Config, error) {
		cfg, err := cf.load(inv.getenv)
		if err != nil {
			return nil, err
		}
		cfg.version = inv.version
		return cfg, nil
	}
	cfg, err := cf.read(inv.getenv) // run makes every check itself (preflight) before it builds
	if err != nil {
		return err
	}
	cfg.version = inv.version
	return serveReloading(ctx, cfg, load, inv.getenv, inv.stderr)
}

func runVersion(_ context.Context, inv invocation, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(inv.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: gateway version\n\nPrint the version, the Go release and the platform.\n")
	}
	if err := parseFlags(fs, args, inv.stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version: unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	fmt.Fprintf(inv.stdout, "mcp-gateway %s (%s, %s/%s)\n", inv.version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// parseFlags parses args; asked for help (-h, --help) it prints the usage to out, the help's
// reader, and returns flag.ErrHelp, which Main turns into exit status 0. Errors print the usage
// to the flag set's output (standard error).
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpFlag(a) {
			w := fs.Output()
			fs.SetOutput(out)
			fs.Usage()
			fs.SetOutput(w)
			return flag.ErrHelp
		}
	}
	return fs.Parse(args)
}

// flagValues are the command-line settings; only those given override the file and env.
type flagValues struct {
	config, listen, adminListen, publicURL, logLevel, logFormat string
	upstreams                                                   []string
	noPrefix, noAuth, force                                     bool
}

// configFlags is the flag set of a command that loads the configuration: the configuration
// flags every such command takes, plus the command's own, which it adds to fs.
type configFlags struct {
	fs  *flag.FlagSet
	fv  flagValues
	out io.Writer
	// noListener marks a command that opens no listener (the pins commands): the refusal of
	// auth.disabled on a non-loopback listener guards what a listener would serve, so it does
	// not apply, and --no-auth alone is enough to name backends by flag.
	noListener bool
}

// newConfigFlags returns the flag set of the command name, whose usage prints about.
func newConfigFlags(name, about string, inv invocation) *configFlags {
	cf := &configFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError), out: inv.stdout}
	fs, fv := cf.fs, &cf.fv
	fs.SetOutput(inv.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: gateway %s [flags]\n\n%s\n\nflags:\n", name, about)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), "\nenvironment (overrides the file, flags override it): MCPGW_CONFIG, %s\n", strings.Join(envVarNames(), ", "))
	}
	fs.StringVar(&fv.config, "config", "", "YAML configuration `file`")
	fs.StringVar(&fv.listen, "listen", "", "MCP listener `address` (default "+defaultListen+")")
	fs.StringVar(&fv.adminListen, "admin-listen", "", "admin listener `address` (default "+defaultAdminListen+")")
	fs.StringVar(&fv.publicURL, "public-url", "", "canonical public `URL` of the MCP endpoint")
	fs.StringVar(&fv.logLevel, "log-level", "", "log `level`: debug, info, warn, error (default "+defaultLogLevel+")")
	fs.StringVar(&fv.logFormat, "log-format", "", "log `format`: json or text (default "+defaultLogFormat+")")
	fs.Func("upstream", "backend as `NAME=URL` (repeatable)", func(v string) error {
		fv.upstreams = append(fv.upstreams, v)
		return nil
	})
	fs.BoolVar(&fv.noPrefix, "no-prefix", false, "pass a single backend's names through unchanged")
	fs.BoolVar(&fv.noAuth, "no-auth", false, "serve without authentication (development only)")
	fs.BoolVar(&fv.force, "force", false, "allow --no-auth on a non-loopback listener")
	return cf
}

// parse parses args, refusing arguments that are not flags.
func (cf *configFlags) parse(args []string) error {
	if err := parseFlags(cf.fs, args, cf.out); err != nil {
		return err
	}
	if cf.fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments: %s", cf.fs.Name(), strings.Join(cf.fs.Args(), " "))
	}
	return nil
}

// read applies the file, then MCPGW_* variables, then the parsed flags, then defaults, without
// checking the result: problems found on the way are kept for the check to report with the
// rest. A file that cannot be read, or is not YAML, is an error at once.
func (cf *configFlags) read(getenv func(string) string) (*Config, error) {
	fv := cf.fv
	if fv.config == "" {
		fv.config = getenv("MCPGW_CONFIG")
	}
	cfg := newConfig()
	if fv.config != "" {
		if err := loadFile(fv.config, &cfg); err != nil {
			return nil, err
		}
	}
	// Problems with variables and flags are reported by the check, with every other one.
	if err := applyEnv(&cfg, getenv); err != nil {
		cfg.src.problems = append(cfg.src.problems, configerr.List(err)...)
		cfg.src.overridden = true
	}
	if err := fv.apply(&cfg); err != nil {
		cfg.src.problems = append(cfg.src.problems, configerr.List(err)...)
		cfg.src.overridden = true
	}
	cfg.forceNoAuth = cfg.forceNoAuth || cf.noListener
	cfg.src.nothingGiven = fv.config == "" && cf.fs.NFlag() == 0 && !slices.ContainsFunc(envVars(),
		func(e envVar) bool { return getenv(e.name) != "" })
	cfg.applyDefaults()
	return &cfg, nil
}

// loadConfig is readConfig followed by every check serve makes before it binds a port
// (preflight), reporting every problem at once.
func loadConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	cf := newConfigFlags(name, "", invocation{getenv: getenv, stdout: stderr, stderr: stderr})
	if err := cf.parse(args); err != nil {
		return nil, err
	}
	return cf.load(getenv)
}

// readConfig parses the configuration flags in args and reads the configuration they name,
// without checking it.
func readConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	cf := newConfigFlags(name, "", invocation{getenv: getenv, stdout: stderr, stderr: stderr})
	if err := cf.parse(args); err != nil {
		return nil, err
	}
	return cf.read(getenv)
}

func (fv *flagValues) apply(c *Config) error {
	for _, p := range []struct {
		dst        *string
		v          string
		path, flag string
	}{
		{&c.Server.Listen, fv.listen, "server.listen", "--listen"}, {&c.Admin.Listen, fv.adminListen, "admin.listen", "--admin-listen"},
		{&c.Server.PublicURL, fv.publicURL, "server.publicURL", "--public-url"},
		{&c.Log.Level, fv.logLevel, "log.level", "--log-level"}, {&c.Log.Format, fv.logFormat, "log.format", "--log-format"},
	} {
		if p.v != "" {
			*p.dst = p.v
			c.src.setBy(p.path, p.flag)
		}
	}
	var errs []error
	for _, err := range configerr.List(addUpstreams(c, fv.upstreams)) {
		errs = append(errs, fmt.Errorf("--upstream: %w", err))
	}
	if fv.noPrefix {
		c.Namespace.NoPrefix = true
		c.src.setBy("namespace.noPrefix", "--no-prefix")
	}
	if fv.noAuth {
		c.Auth.Disabled = true
		c.src.setBy("auth.disabled", "--no-auth")
	}
	c.forceNoAuth = fv.force
	return errors.Join(errs...)
}

const checkConfigAbout = `Load the configuration (file, environment, flags) and run every check serve runs before it
binds a port: the settings themselves, every secret file and variable, the sealing keys' length,
the TLS files and the pins lock file. Every problem is printed at once; the exit status is 1 on
any. Nothing is contacted unless --online is given.`

func runCheckConfig(ctx context.Context, inv invocation, args []string) error {
	cf := newConfigFlags("check-config", checkConfigAbout, inv)
	static := cf.fs.Bool("static", false, "check the settings only, without reading the files and variables they name\n"+
		"(for a configuration rendered for another machine, such as a Helm chart in CI)")
	online := cf.fs.Bool("online", false, "also contact what serve depends on outside the process: issuers, Redis, backends,\n"+
		"interceptors, the approval sign-in issuer, authorization servers, token endpoints, the\n"+
		"embeddings endpoint and the tracing collector, reporting each one (docs/deploy.md)")
	if err := cf.parse(args); err != nil {
		return err
	}
	if *static && *online {
		return errors.New("check-config: --static and --online exclude each other")
	}
	cfg, err := cf.read(inv.getenv)
	if err != nil {
		return err
	}
	scope := checkMachine
	if *static {
		scope = checkSettings
	}
	if err := cfg.check(inv.getenv, scope); err != nil {
		return err
	}
	scheme := "http"
	if cfg.Server.TLS.CertFile != "" {
		scheme = "https"
	}
	fmt.Fprintf(inv.stdout, "configuration OK: %d upstream(s), MCP on %s, admin on %s\n",
		len(cfg.Upstreams), listenURL(scheme, cfg.Server.Listen, cfg.Server.Path), listenURL("http", cfg.Admin.Listen, ""))
	for _, note := range []string{authOffNote(cfg), policyNote(cfg)} {
		if note != "" {
			fmt.Fprintln(inv.stdout, note)
		}
	}
	fmt.Fprint(inv.stdout, cfg.legacyNote())
	fmt.Fprint(inv.stdout, cfg.userOAuthNote())
	if *online {
		if cfg.Redis.enabled() {
			// The check reports Redis in its own line; the client's pool messages would repeat
			// it on standard error.
			useRedisLogger(slog.New(slog.DiscardHandler))
		}
		return cfg.checkOnline(ctx, inv.getenv, inv.stdout)
	}
	return nil
}

// didYouMean returns ` (did you mean "x"?)` for the known word nearest to s, or "" when none is
// near enough to be a likely typo.
func didYouMean(s string, known []string) string {
	if n := configyaml.Nearest(s, known); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

func envVarNames() []string {
	vars := envVars()
	names := make([]string, 0, len(vars))
	for _, e := range vars {
		names = append(names, e.name)
	}
	return slices.Clip(names)
}

// load is read followed by every check serve makes before it binds a port (preflight).
func (cf *configFlags) load(getenv func(string) string) (*Config, error) {
	return cf.loadChecked(getenv, checkMachine)
}

// loadToPin is load for pins write and pins diff: every check but that of the pins lock file,
// which the one makes and the other compares with --pins. The configuration an operator deploys
// names the lock file, so the first pins write, or one after a backend was added, must not need
// that file to exist and cover every backend already.
func (cf *configFlags) loadToPin(getenv func(string) string) (*Config, error) {
	return cf.loadChecked(getenv, checkMachineButLock)
}

func (cf *configFlags) loadChecked(getenv func(string) string, scope checkScope) (*Config, error) {
	cfg, err := cf.read(getenv)
	if err != nil {
		return nil, err
	}
	if err := cfg.check(getenv, scope); err != nil {
		return nil, err
	}
	return cfg, nil
}

// listenURL is the URL a client reaches a listener at: scheme, listen's host and port, then
// path. A listener on every interface is named with HOST for the host (the machine's name or
// address, which the gateway cannot know), and port 0 says it is chosen at start.
func listenURL(scheme, listen, path string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return scheme + "://" + listen + path
	}
	note := ""
	if ip, err := netip.ParseAddr(host); host == "" || err == nil && ip.IsUnspecified() {
		host, note = "HOST", " (every interface)"
	}
	if port == "0" {
		note += " (port 0: a free port chosen at start)"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + path + note
}
