package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"listwatch/informer"
)

func main() {
	noColor := flag.Bool("no-color", false, "never colour the output (it is coloured only on a terminal anyway)")
	queue := flag.String("queue", string(informer.DeltaFIFO), "the informer's queue: DeltaFIFO (the articles'), RealFIFO or AtomicFIFO (client-go's default since 1.36)")
	all := flag.Bool("all", false, "show every line every layer prints, not only the tour's objects")
	flag.Parse()

	var q informer.QueueKind
	for _, k := range informer.QueueKinds() {
		if strings.EqualFold(*queue, string(k)) {
			q = k
		}
	}
	if q == "" {
		fmt.Fprintf(os.Stderr, "tour: -queue must be one of %v, not %q\n", informer.QueueKinds(), *queue)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Stdout, options{
		Colour: !*noColor && isTerminal(os.Stdout),
		Queue:  q,
		All:    *all,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "\ntour: FAILED: %v\n", err)
		stop()
		os.Exit(1)
	}
}
