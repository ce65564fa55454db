package label

import "fmt"

// ParamError is a run parameter that cannot be used. Param names it as the
// package's documentation does ("epsilon", "max-queries", "label-weights"):
// how a caller lets its users set it (a command line's flags, a form's
// fields) is the caller's to say, with Message. It matches ErrInvalidInput.
type ParamError struct {
	Param string
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
		if p, ok := a.(ParamName); ok {
			a = name(string(p))
		}
		args[i] = a
	}
	return name(e.Param) + fmt.Sprintf(e.Format, args...)
}

func (e *ParamError) Error() string { return ErrInvalidInput.Error() + ": " + e.Message(PlainName) }

// Is makes a ParamError match ErrInvalidInput.
func (e *ParamError) Is(target error) bool { return target == ErrInvalidInput }

// paramError is a ParamError of param: format (with args) follows the
// parameter's name, so it starts with a space or a colon.
func paramError(param, format string, args ...any) error {
	return &ParamError{Param: param, Format: format, Args: args}
}
