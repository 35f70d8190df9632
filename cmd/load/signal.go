package main

import "os"

// interruptSignal asks the started server to stop as Ctrl-C would.
var interruptSignal = os.Interrupt
