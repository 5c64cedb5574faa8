package main

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// ask prints salt-key's "Proceed?" and reads the answer; an empty answer
// is def.
func ask(in io.Reader, w io.Writer, def bool) (bool, error) {
	prompt := "Proceed? [N/y] "
	if def {
		prompt = "Proceed? [n/Y] "
	}
	if _, err := io.WriteString(w, prompt); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	line = strings.ToLower(strings.TrimSpace(line))
	if line == "" {
		return def, nil
	}
	return strings.HasPrefix(line, "y"), nil
}
