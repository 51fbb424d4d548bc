// Package configerr is the error type every configuration check reports: a problem with one
// setting, named by its key path as written in the gateway's configuration file
// (upstreams[1].url, auth.issuers[0].issuer), so that an operator finds the setting whatever
// package checked it, and the gateway can point at its line in the file.
//
// Checks never put a secret's value, or any part of it, in the message.
package configerr

import (
	"errors"
	"fmt"
)

// Error is one problem with the setting at Path.
type Error struct {
	// Path is the setting's key path in the configuration file: map keys joined with ".", list
	// entries indexed ("upstreams[1].url"). Empty for a problem of the file as a whole.
	Path string
	// Line and Column locate the setting in the file when the problem was found while reading
	// it; 0 when unknown (the gateway then looks the path up).
	Line, Column int
	// Err is the problem, without the path.
	Err error
	// Kind, when set, is a sentinel the error also matches with errors.Is, such as a package's
	// ErrInvalidConfig.
	Kind error
}

// Error returns "path: problem", every URL in it quoted as URL quotes it: a setting's value is
// quoted in its problem, and a configured URL may carry a credential.
func (e *Error) Error() string {
	if e.Path == "" {
		return RedactURLs(e.Err.Error())
	}
	return e.Path + ": " + RedactURLs(e.Err.Error())
}

// Unwrap returns the problem and the kind, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Kind}
}

// At returns the problem at path, formatted as fmt.Errorf formats (%w wraps).
func At(path, format string, args ...any) error {
	return &Error{Path: path, Err: fmt.Errorf(format, args...)}
}

// Of is At with a kind: the error also matches kind with errors.Is.
func Of(kind error, path, format string, args ...any) error {
	return &Error{Path: path, Err: fmt.Errorf(format, args...), Kind: kind}
}

// List flattens err, as errors.Join builds it, into the problems it holds, in order.
func List(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if _, own := err.(*Error); !own {
			var out []error
			for _, e := range j.Unwrap() {
				out = append(out, List(e)...)
			}
			return out
		}
	}
	return []error{err}
}

// PathOf returns the key path err names, if it is or wraps an *Error.
func PathOf(err error) (string, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Path, true
	}
	return "", false
}

// Under returns errs with each problem placed under the block at prefix ("timeout" under
// "upstreams[1]" is "upstreams[1].timeout"; a problem without a path gets prefix itself) and,
// when kind is not nil, matching kind. A check of a block reports paths relative to it; its
// caller, which knows where the block sits, puts them under it. Nil errors are dropped.
func Under(prefix string, kind error, errs ...error) []error {
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		for _, e := range List(err) {
			var ce *Error
			if !errors.As(e, &ce) {
				ce = &Error{Err: e}
			}
			c := *ce
			c.Path = join(prefix, c.Path)
			if kind != nil {
				c.Kind = kind
			}
			out = append(out, &c)
		}
	}
	return out
}

// join is prefix and path as one key path.
func join(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case path[0] == '[':
		return prefix + path
	}
	return prefix + "." + path
}

// Note returns errs with each problem's message prefixed by note ("rule \"gh-write\": …"), to
// name what a path's index alone does not.
func Note(note string, errs ...error) []error {
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) {
			out = append(out, fmt.Errorf("%s: %w", note, e))
			continue
		}
		c := *ce
		c.Err = fmt.Errorf("%s: %w", note, c.Err)
		out = append(out, &c)
	}
	return out
}
