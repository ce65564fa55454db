package label

import (
	"errors"
	"fmt"
	"strings"
)

// ParamError is a run parameter that cannot be used. Param names it as the
// package's documentation does ("epsilon", "max-queries", "label-weights"):
// how a caller lets its users set it (a command line's flags, a form's
// fields) is the caller's to say, with Message. The validation of a run
// wraps it in ErrInvalidInput.
type ParamError struct {
	Param string
	// Before is any text of the message before the parameter's name.
	Before string
	// Format and Args say what is wrong; the message is the parameter's
	// name followed by them. An argument of type ParamName names another
	// parameter, and is shown as Param is.
	Format string
	Args   []any
}

// ParamName is a parameter named inside a ParamError's message.
type ParamName string

// PlainName shows a parameter by its name.
func PlainName(param string) string { return param }

// Message is the error's message with each parameter shown as name shows
// it (PlainName: as in Error).
func (e *ParamError) Message(name func(param string) string) string {
	args := make([]any, len(e.Args))
	for i, a := range e.Args {
		switch v := a.(type) {
		case ParamName:
			a = name(string(v))
		case error:
			a = ShowParams(v, name)
		}
		args[i] = a
	}
	return e.Before + name(e.Param) + fmt.Sprintf(e.Format, args...)
}

func (e *ParamError) Error() string { return e.Message(PlainName) }

// Unwrap returns the cause, the first of Args that is an error.
func (e *ParamError) Unwrap() error {
	for _, a := range e.Args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

// badParam is a ParamError of param: format (with args) follows the
// parameter's name, so it starts with a space or a colon.
func badParam(param, format string, args ...any) *ParamError {
	return &ParamError{Param: param, Format: format, Args: args}
}

// paramError is badParam as an invalid input.
func paramError(param, format string, args ...any) error {
	return invalid("%w", badParam(param, format, args...))
}

// ShowParams is err's message with the parameters of a ParamError in its
// chain shown as name shows them.
func ShowParams(err error, name func(param string) string) string {
	msg := err.Error()
	var pe *ParamError
	if errors.As(err, &pe) {
		msg = strings.Replace(msg, pe.Message(PlainName), pe.Message(name), 1)
	}
	return msg
}
