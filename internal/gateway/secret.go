package gateway

import (
	"errors"
	"fmt"
	"strings"
)

// Secret is a configuration value that may be given inline, read from a file, or read from an
// environment variable, so that no secret needs to be in the YAML. Exactly one source is set.
type Secret struct {
	// Value is the secret inline. Convenient for development; prefer File or Env.
	Value string `yaml:"value"`
	// File is a path whose contents (trailing newline trimmed) are the secret, e.g. a mounted
	// Kubernetes Secret.
	File string `yaml:"file"`
	// Env names an environment variable holding the secret.
	Env string `yaml:"env"`
}

// maxSecretFileBytes bounds what is read of a secret file: a secret is a token, a password or a
// key of at most a few kilobytes, and a path naming something else (a device, a log) must not
// take the process's memory.
const maxSecretFileBytes = 1 << 20

// IsZero reports whether no source is set.
func (s Secret) IsZero() bool { return s.Value == "" && s.File == "" && s.Env == "" }

func (s Secret) validate() error {
	n := 0
	for _, v := range []string{s.Value, s.File, s.Env} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("exactly one of value, file or env must be set")
	}
	return nil
}

// resolve returns the secret's value. Errors name the source, never the value.
func (s Secret) resolve(getenv func(string) string) (string, error) {
	if err := s.validate(); err != nil {
		return "", err
	}
	switch {
	case s.File != "":
		b, err := readAtMost(s.File, maxSecretFileBytes)
		if errors.Is(err, errFileTooLarge) {
			return "", fmt.Errorf("secret file %s is larger than %d KiB: a secret is a line (is it the right file?)",
				s.File, maxSecretFileBytes>>10)
		}
		if err != nil {
			return "", fmt.Errorf("reading secret file: %w", err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("secret file %s is empty", s.File)
		}
		return v, nil
	case s.Env != "":
		v := getenv(s.Env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty or unset", s.Env)
		}
		return v, nil
	}
	return s.Value, nil
}
