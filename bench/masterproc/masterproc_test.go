package masterproc

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSampleMem: n readings of a live process, the median one of them.
func TestSampleMem(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		all, med, err := SampleMem(os.Getpid(), n, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != n {
			t.Fatalf("n %d: %d samples", n, len(all))
		}
		below, above := 0, 0
		for _, s := range all {
			if s.RSSKiB < med.RSSKiB {
				below++
			}
			if s.RSSKiB > med.RSSKiB {
				above++
			}
		}
		if med.RSSKiB <= 0 || below > n/2 || above > n/2 {
			t.Errorf("n %d: median %+v of %+v", n, med, all)
		}
	}
	if _, _, err := SampleMem(-1, 2, time.Millisecond); err == nil {
		t.Error("SampleMem of no process: no error")
	}
}

// TestAddConfig: what a benchmark adds follows Prepare's configuration.
func TestAddConfig(t *testing.T) {
	s := &Setup{MasterDir: t.TempDir()}
	path := filepath.Join(s.MasterDir, "master")
	if err := os.WriteFile(path, []byte("id: bench\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, add := range []string{"log_level: debug\n", "file_roots:\n  base: [/srv]\n"} {
		if err := s.AddConfig(add); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "id: bench\nlog_level: debug\nfile_roots:\n  base: [/srv]\n"; string(b) != want {
		t.Errorf("configuration %q, want %q", b, want)
	}
	if err := (&Setup{MasterDir: filepath.Join(s.MasterDir, "none")}).AddConfig("x: 1\n"); err == nil {
		t.Error("AddConfig without a configuration: no error")
	}
}

// TestStartGroup: a command in a group of its own leads it, sees the
// environment it was given, and appends to its log.
func TestStartGroup(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group bool
		env   []string
	}{
		{name: "group", group: true, env: []string{"BENCH_X=1"}},
		{name: "inherit", group: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "out.log")
			if err := os.WriteFile(log, []byte("before\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := StartGroup("sh", log, tc.group, tc.env, "/bin/sh", "-c", `echo "x=$BENCH_X"; sleep 60`)
			if err != nil {
				t.Fatal(err)
			}
			pgid, err := syscall.Getpgid(m.PID())
			if err != nil {
				t.Fatal(err)
			}
			if leads := pgid == m.PID(); leads != tc.group {
				t.Errorf("leads its group: %v, want %v", leads, tc.group)
			}
			deadline := time.Now().Add(5 * time.Second)
			for b, _ := os.ReadFile(log); !strings.Contains(string(b), "x="); b, _ = os.ReadFile(log) {
				if time.Now().After(deadline) {
					t.Fatalf("log %q: the command wrote nothing", b)
				}
				time.Sleep(5 * time.Millisecond)
			}
			m.Kill()
			select {
			case <-m.Done():
			default:
				t.Fatal("Done not closed after Kill")
			}
			b, _ := os.ReadFile(log)
			want := "before\nx=\n"
			if tc.env != nil {
				want = "before\nx=1\n"
			}
			if string(b) != want {
				t.Errorf("log %q, want %q", b, want)
			}
		})
	}
}

// TestOptionsFlags: the common flags with the benchmark's defaults and
// help, -cpuprofile only where the benchmark writes one.
func TestOptionsFlags(t *testing.T) {
	defer func(fs *flag.FlagSet) { flag.CommandLine = fs }(flag.CommandLine)
	for _, tc := range []struct {
		name string
		u    Usage
		args []string
		want Options
	}{
		{name: "agents", u: Usage{Brine: "b", Keep: "k", CPUProfile: "c", Phase: 2 * time.Minute, PhaseTimeout: "p"},
			want: Options{Out: "bench/results/agents.json", Bin: "bin/brine", PhaseTimeout: 2 * time.Minute}},
		{name: "saltside", u: Usage{Brine: "b", Keep: "k", Phase: 3 * time.Minute, PhaseTimeout: "p"},
			args: []string{"-keep", "-brine", "/x/brine", "-out", "o.json", "-phase-timeout", "5s"},
			want: Options{Out: "o.json", Bin: "/x/brine", Keep: true, PhaseTimeout: 5 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flag.CommandLine = flag.NewFlagSet(tc.name, flag.ContinueOnError)
			var o Options
			o.Flags(tc.name, tc.u)
			if err := flag.CommandLine.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if o != tc.want {
				t.Errorf("options %+v, want %+v", o, tc.want)
			}
			if has := flag.Lookup("cpuprofile") != nil; has != (tc.u.CPUProfile != "") {
				t.Errorf("-cpuprofile registered: %v", has)
			}
			if f := flag.Lookup("brine"); f == nil || !strings.Contains(f.Usage, tc.u.Brine) {
				t.Errorf("-brine: %+v", f)
			}
		})
	}
}
