// Command chaos runs the list-watch chaos test for as long as you like: an
// apiserver with its fault switches on, writers, informers, and every
// fault fired at random (from a seed), then a convergence check. It prints
// the seed first and the counts at the end, and exits 1 if any informer or
// handler diverged from the server.
//
//	go run ./cmd/chaos                                  # 10 s, random seed
//	go run ./cmd/chaos -duration 5m -seed 42            # the soak of docs/chaos.md
//	go run ./cmd/chaos -kill 2 -stall 0 -v              # kill often, never stall, narrate
//
// Every fault has a rate flag in injections per second (0 turns it off).
// See docs/chaos.md and package listwatch/chaos.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"listwatch/chaos"
	"listwatch/narrate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the program: it parses args, runs, prints, and returns the exit
// code. Ctrl-C (ctx) ends the run early.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg chaos.Config
	seed := fs.Uint64("seed", 0, "seed of every random choice (0: derived from the clock)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long writers write and faults fire")
	fs.IntVar(&cfg.Writers, "writers", 4, "concurrent writers")
	fs.IntVar(&cfg.Keys, "keys", 300, "ConfigMap names written")
	fs.IntVar(&cfg.Namespaces, "namespaces", 3, "namespaces the keys are spread over")
	fs.IntVar(&cfg.Informers, "informers", 5, "informers watching (they differ by index: queue, scope, paging, transport, watch-list)")
	fs.DurationVar(&cfg.WriteInterval, "write-interval", 2*time.Millisecond, "each writer's pause between writes")
	fs.DurationVar(&cfg.ConvergenceTimeout, "converge-timeout", chaos.DefaultConvergenceTimeout, "longest wait for convergence after the writers stop")
	verbose := fs.Bool("v", false, "narrate every fault and phase on stderr")
	rates := map[chaos.FaultKind]*float64{}
	for _, k := range chaos.FaultKinds() {
		rates[k] = fs.Float64(k.String(), chaos.DefaultFaultRates.Rate(k), fmt.Sprintf("rate of the %s fault, per second (0: off)", k))
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chaos: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg.Seed = *seed
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	cfg.Faults = &chaos.FaultRates{}
	for k, r := range rates {
		cfg.Faults.SetRate(k, *r)
	}
	if *verbose {
		cfg.Tracer = narrate.New(stderr)
	}
	fmt.Fprintf(stdout, "seed %d\n", cfg.Seed)

	start := time.Now()
	rep, err := chaos.Run(ctx, cfg)
	fmt.Fprint(stdout, rep)
	fmt.Fprintf(stdout, "wall time      %v\n", time.Since(start).Round(time.Millisecond))
	switch {
	case errors.Is(err, chaos.ErrDiverged):
		fmt.Fprintf(stderr, "chaos: FAIL: %v\n", err)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "PASS: every informer and handler converged to the server's state")
	return 0
}
