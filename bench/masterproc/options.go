package masterproc

import (
	"flag"
	"time"
)

// Options are the flags every benchmark that runs a `brine master`
// process takes: where its results go, the brine binary, whether its
// working directory is kept, a CPU profile of its own process and how
// long a phase may take. A benchmark embeds them in its own options.
type Options struct {
	Out, Bin, CPUProfile string
	Keep                 bool
	PhaseTimeout         time.Duration
}

// Usage is what a benchmark's help says of the flags of Options: of its
// brine binary, the directory -keep keeps, whose -cpuprofile is written
// (none: no -cpuprofile flag) and what -phase-timeout gives up on;
// Phase is -phase-timeout's default.
type Usage struct {
	Brine, Keep, CPUProfile, PhaseTimeout string
	Phase                                 time.Duration
}

// Flags registers Options' flags of benchmark name (bench/<name>, its
// results bench/results/<name>.json by default) on flag.CommandLine.
func (o *Options) Flags(name string, u Usage) {
	flag.StringVar(&o.Out, "out", "bench/results/"+name+".json", "where to write the JSON results")
	flag.StringVar(&o.Bin, "brine", "bin/brine", u.Brine)
	flag.BoolVar(&o.Keep, "keep", false, u.Keep)
	if u.CPUProfile != "" {
		flag.StringVar(&o.CPUProfile, "cpuprofile", "", u.CPUProfile)
	}
	flag.DurationVar(&o.PhaseTimeout, "phase-timeout", u.Phase, u.PhaseTimeout)
}
