// Command fakeagent stands in for brine-agent in the bootstrap's tests: run
// as `brine-agent -c DIR`, as the bootstrap starts the agent, it
// prints the id and master of DIR/minion and stays up, as an agent does; a
// minion file with `fail: true` makes it exit at once, as an agent with a
// bad configuration does.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "-c" {
		fmt.Fprintf(os.Stderr, "fakeagent: want -c DIR, got %q\n", os.Args[1:])
		os.Exit(2)
	}
	b, err := os.ReadFile(filepath.Join(os.Args[2], "minion"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(1)
	}
	conf := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			conf[k] = v
		}
	}
	if conf["fail"] == "true" {
		fmt.Println("fakeagent: fail: true in the minion file")
		os.Exit(1)
	}
	fmt.Printf("fakeagent: started as %s for master %s\n", conf["id"], conf["master"])
	for {
		time.Sleep(time.Hour)
	}
}
