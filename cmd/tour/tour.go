package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/fifo"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/reflector"
)

// The objects the tour follows, and the numbers it plays with.
const (
	namespace = "default"
	demoName  = "demo"  // the object whose trip the tour narrates
	alphaName = "alpha" // deleted while the informer is away: the tombstone
	busyName  = "busy"  // written to while the informer is away
	demoKey   = namespace + "/" + demoName
	alphaKey  = namespace + "/" + alphaName
	busyKey   = namespace + "/" + busyName

	// historySize is the watch cache's window, in events. Small, so that a
	// burst of writes while the informer is away pushes its resourceVersion
	// out of it (Kubernetes sizes the window to about 75 s of events).
	historySize = 8
	// burst is how many writes to busy happen while the informer is away:
	// more than the window holds.
	burst = historySize + 2
)

var configMaps = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// consumerAgent starts the User-Agent of the tour's silent client, whose
// watches the hot loop ends by their timeout without ending the
// informer's.
const consumerAgent = "tour-consumer/"

// options are the tour's knobs; main sets them from flags, tests directly.
type options struct {
	// Colour paints layer names and headings (only for terminals).
	Colour bool
	// Queue is the informer's queue: informer.DeltaFIFO, RealFIFO or AtomicFIFO.
	Queue informer.QueueKind
	// All switches the spotlight off: every line of every layer.
	All bool
	// WatchTimeout is the timeoutSeconds the Reflector asks for, i.e. how
	// long chapter 3 waits for the server to end the watch.
	WatchTimeout time.Duration
	// StageTimeout bounds each wait; a stage that takes longer failed.
	StageTimeout time.Duration
}

func (o *options) defaults() {
	if o.Queue == "" {
		o.Queue = informer.DeltaFIFO
	}
	if o.WatchTimeout < time.Second {
		o.WatchTimeout = 3 * time.Second
	}
	if o.StageTimeout <= 0 {
		o.StageTimeout = 20 * time.Second
	}
}

// tour is one run's state.
type tour struct {
	o      options
	con    *console
	spot   *spotlight
	tr     *narrate.Tracer
	ev     *evidence
	srv    *apiserver.Server
	writer *client.ResourceClient // writes as kubectl would: a separate, silent client
	cable  *cable
	inf    *informer.SharedIndexInformer
	done   []string // the checklist of what happened
	// chapterNo is the number of the chapter being told; chapter sets it.
	chapterNo int
	// silent is a client for the tour's side stories (the hot loop,
	// RetryWatcher, the websocket): nothing it does is narrated, so its
	// watches are not mistaken for the informer's.
	silent *client.Client
	// stopped is closed when the informer's Run has returned; nil until
	// it is started.
	stopped chan struct{}
	// start is when the tour started: every Tracer times its lines from it.
	start time.Time
}

// run runs the whole tour, writing to w. It returns nil when every stage
// happened and the informer converged, and an error naming the first
// stage that did not otherwise.
func run(ctx context.Context, w io.Writer, o options) (err error) {
	o.defaults()
	t := &tour{o: o, con: &console{w: w, colour: o.Colour}, ev: newEvidence(), start: time.Now()}
	t.spot = &spotlight{all: o.All, follow: []string{demoKey, alphaKey}, landing: []string{busyKey}}
	// Chapter 2 ends only once every layer's line about the event has been
	// printed: the server's and the client's goroutines race, and a late
	// server line would otherwise land in chapter 3.
	t.con.written = func(s string) {
		if !t.spot.trip.Load() {
			return
		}
		if layer, msg, ok := narration(s); ok {
			if step := tripStep(layer, msg, demoKey); step != "" {
				t.ev.record(func() { t.ev.tripSteps[step] = true })
			}
		}
	}
	t.tr = narrate.New(t.con, narrate.WithColour(o.Colour), narrate.WithStart(t.start), narrate.WithFilter(t.spot.keep))

	t.con.print(t.con.paint("1", intro) + "\n")

	// The apiserver, in-process on a free loopback port.
	t.srv, err = apiserver.Start(ctx, apiserver.Config{
		Listen:       "127.0.0.1:0",
		EnableFaults: true,
		HistorySize:  historySize,
		Tracer:       t.tr,
	})
	if err != nil {
		return fmt.Errorf("starting the apiserver: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if serr := t.srv.Stop(stopCtx); serr != nil && err == nil {
			err = fmt.Errorf("stopping the apiserver: %w", serr)
		}
	}()

	// Two clients: the informer's, whose connections the wiretap shows
	// and whose every step is narrated, and a silent one that makes the
	// changes, as kubectl in another terminal would.
	tap := &wiretap{tr: t.tr}
	tapped, plain := tap.transport(), &http.Transport{}
	defer tapped.CloseIdleConnections()
	defer plain.CloseIdleConnections()
	informerClient, err := client.New(client.Config{Host: t.srv.URL(), Tracer: t.tr,
		HTTPClient: &http.Client{Transport: tapped}, UserAgent: "tour-informer/" + client.Version})
	if err != nil {
		return err
	}
	writerClient, err := client.New(client.Config{Host: t.srv.URL(),
		HTTPClient: &http.Client{Transport: plain}, UserAgent: "tour-kubectl/" + client.Version})
	if err != nil {
		return err
	}
	t.writer = writerClient.Resource(configMaps).Namespace(namespace)
	t.cable = newCable("informer", informerClient.Resource(configMaps).Namespace(namespace), t.ev, t.tr)

	infCtx, stopInformer := context.WithCancel(ctx)
	defer func() {
		stopInformer()
		if t.stopped != nil {
			<-t.stopped
		}
	}()

	silentClient, err := client.New(client.Config{Host: t.srv.URL(),
		HTTPClient: &http.Client{Transport: plain}, UserAgent: consumerAgent + client.Version})
	if err != nil {
		return err
	}
	t.silent = silentClient

	for i, st := range t.steps() {
		sctx := ctx
		if i == 0 {
			sctx = infCtx // the informer runs until the tour ends
		}
		if err := st.run(sctx); err != nil {
			t.spot.quiet.Store(true)
			t.con.result(false, err.Error())
			return err
		}
	}

	t.spot.quiet.Store(true) // what the layers do while shutting down is not part of the story
	t.chapter(chapterText{title: "What you saw"})
	for _, d := range t.done {
		t.con.result(true, d)
	}
	t.con.print("\n" + outro + "\n")
	return nil
}

// step is one chapter of the tour: a function that tells it (printing its
// heading with t.chapter) and returns an error if what it shows did not
// happen.
type step struct {
	name string
	run  func(context.Context) error
}

// steps are the tour's chapters, in the order they are told. The first
// starts the informer, which runs until the tour ends; each later one
// relies only on the informer running and on the objects the chapters
// before it created. To add a chapter, write one method and list it here.
func (t *tour) steps() []step {
	return []step{
		{"start", t.startInformer},
		{"trip", t.trip},
		{"websocket", t.overWebsocket},
		{"today", t.todaysDefault},
		{"timeout", t.timeout},
		{"continue", t.hotLoop},
		{"kill", t.kill},
		{"http2", t.overHTTP2},
		{"retrywatcher", t.retryWatcher},
		{"expired", t.expired},
		{"converged", t.converged},
	}
}

// chapter starts the next chapter: its number, heading and prose.
func (t *tour) chapter(ch chapterText) {
	t.chapterNo++
	t.con.chapter(t.chapterNo, ch)
}

// here names the current chapter in errors: "chapter 3".
func (t *tour) here() string { return fmt.Sprintf("chapter %d", t.chapterNo) }

// startInformer is chapter 1: create alpha, then start the informer and
// wait until it has listed and is watching. The informer runs until ctx is
// done.
func (t *tour) startInformer(ctx context.Context) error {
	t.chapter(chapterStart(t.srv.URL(), string(t.o.Queue)))
	alpha, err := t.writer.Create(ctx, configMap(alphaName, "1"))
	if err != nil {
		return fmt.Errorf("creating %s: %w", alphaKey, err)
	}
	// Wait until the watch cache has it, so that the informer's first
	// LIST (served by the cache, at "any" resourceVersion) includes it: a
	// list at a resourceVersion is answered only once the cache is at
	// least that fresh.
	if _, err := t.writer.List(ctx, api.ListOptions{ResourceVersion: alpha.Metadata.ResourceVersion}); err != nil {
		return fmt.Errorf("waiting for the watch cache: %w", err)
	}
	t.inf, err = informer.NewSharedIndexInformer(t.cable, informer.Options{
		Queue:  t.o.Queue,
		Tracer: t.tr,
		Reflector: reflector.Options{
			Name: "configmaps",
			// The tour tells the LIST-then-WATCH story step by step, as
			// the articles do; client-go's default since 1.35 streams the
			// initial state instead (examples/11-watch-list shows it).
			InitialList:     reflector.ListThenWatch,
			MinWatchTimeout: t.o.WatchTimeout,
			MaxWatchTimeout: t.o.WatchTimeout,
		},
	})
	if err != nil {
		return err
	}
	if err := t.inf.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) {
		t.ev.record(func() {
			t.ev.lastError = err
			if api.IsResourceExpired(err) || api.IsGone(err) {
				t.ev.expired++
			}
		})
	}); err != nil {
		return err
	}
	if _, err := t.inf.AddEventHandlerWithOptions(t.handler(), informer.HandlerOptions{Name: "tour"}); err != nil {
		return err
	}
	t.stopped = make(chan struct{})
	go func() {
		defer close(t.stopped)
		t.inf.Run(ctx)
	}()
	err = t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the informer lists and starts watching", func() bool {
		return t.ev.handled("add", alphaKey, alpha.Metadata.ResourceVersion) && t.ev.watchCount() >= 1
	})
	if err != nil {
		return err
	}
	t.check("listed (alpha at rv %s), then watched from rv %s", alpha.Metadata.ResourceVersion, t.lastWatchRV())
	return nil
}

// handler is the tour's event handler: it records what it is told, and
// says so when a delete arrives as a tombstone.
func (t *tour) handler() informer.ResourceEventHandler {
	return informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, initial bool) {
			t.ev.record(func() { t.ev.notes = append(t.ev.notes, handlerNote("add", obj, false, initial)) })
		},
		UpdateFunc: func(_, obj *api.Object) {
			t.ev.record(func() { t.ev.notes = append(t.ev.notes, handlerNote("update", obj, false, false)) })
		},
		DeleteFunc: func(obj any) {
			last := informer.ObjectOf(obj)
			n := handlerNote("delete", last, false, false)
			if d, ok := tombstoneOf(obj); ok {
				n.key, n.tombstone = d.Key, true
				rv := "?"
				if last != nil {
					rv = last.Metadata.ResourceVersion
				}
				t.tr.Printf(narrate.Handler, "tour got DeletedFinalStateUnknown{Key: %q}: deleted while we were away; last state we knew: rv=%s", d.Key, rv)
			}
			t.ev.record(func() { t.ev.notes = append(t.ev.notes, n) })
		},
	}
}

// tombstoneOf returns the tombstone an OnDelete argument may be.
func tombstoneOf(obj any) (fifo.DeletedFinalStateUnknown, bool) {
	switch d := obj.(type) {
	case fifo.DeletedFinalStateUnknown:
		return d, true
	case *fifo.DeletedFinalStateUnknown:
		if d != nil {
			return *d, true
		}
	}
	return fifo.DeletedFinalStateUnknown{}, false
}

// trip is chapter 2: follow one event through every layer.
func (t *tour) trip(ctx context.Context) error {
	t.chapter(chapterTrip())
	t.spot.trip.Store(true)
	defer t.spot.trip.Store(false)
	demo, err := t.writer.Create(ctx, configMap(demoName, "1"))
	if err != nil {
		return fmt.Errorf("creating %s: %w", demoKey, err)
	}
	rv := demo.Metadata.ResourceVersion
	var missing []string
	err = t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the handler is told about "+demoKey, func() bool {
		missing = t.ev.missingTripSteps()
		return t.ev.handled("add", demoKey, rv) && len(missing) == 0
	})
	if err != nil {
		if len(missing) > 0 {
			err = fmt.Errorf("%w; no line from %s", err, strings.Join(missing, ", "))
		}
		return err
	}
	t.check("followed ADDED %s rv=%s from the store to the handler", demoKey, rv)
	return nil
}

// timeout is a chapter: the server ends the watch at its timeout; the
// Reflector re-watches without re-listing.
func (t *tour) timeout(ctx context.Context) error {
	t.chapter(chapterTimeout(int(t.o.WatchTimeout / time.Second)))
	watches, lists := t.counts()
	err := t.ev.waitFor(ctx, t.o.WatchTimeout+t.o.StageTimeout, t.here()+": the server times the watch out and the Reflector re-watches", func() bool {
		return t.ev.watchCount() > watches
	})
	if err != nil {
		return err
	}
	if _, l := t.counts(); l != lists {
		return errors.New(t.here() + ": the Reflector re-listed after a watch timeout; it should only re-watch")
	}
	from, lasted := t.lastWatchRV(), t.watchLasted()
	rv, err := t.changeDemo(ctx, "2")
	if err != nil {
		return err
	}
	t.check("the server ended the watch after %.1fs (timeoutSeconds=%d); re-watched from rv %s without re-listing; rv %s arrived",
		lasted.Seconds(), int(t.o.WatchTimeout/time.Second), from, rv)
	return nil
}

// kill is a chapter: the connection is reset; the Reflector re-watches.
func (t *tour) kill(ctx context.Context) error {
	t.chapter(chapterKill())
	watches, lists := t.counts()
	if err := t.killWatch(ctx); err != nil {
		return err
	}
	err := t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the Reflector re-watches after a reset", func() bool {
		return t.ev.watchCount() > watches
	})
	if err != nil {
		return err
	}
	if _, l := t.counts(); l != lists {
		return errors.New(t.here() + ": the Reflector re-listed after a connection reset; it should only re-watch")
	}
	from := t.lastWatchRV()
	rv, err := t.changeDemo(ctx, "3")
	if err != nil {
		return err
	}
	t.check("connection reset; re-watched from rv %s without re-listing; rv %s arrived", from, rv)
	return nil
}

// expired is a chapter: away too long, 410, re-list, tombstone.
func (t *tour) expired(ctx context.Context) error {
	t.chapter(chapterExpired(burst, historySize))
	_, lists := t.counts()
	t.cable.unplug()
	if err := t.killWatchOrAway(ctx); err != nil {
		return err
	}

	t.con.note("while the informer is away: delete %s, change %s, %d writes to %s/%s, compact", alphaKey, demoKey, burst, namespace, busyName)
	if err := t.writer.Delete(ctx, alphaName, client.DeleteOptions{}); err != nil {
		return fmt.Errorf("%s: deleting %s: %w", t.here(), alphaKey, err)
	}
	demo, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch("4"))
	if err != nil {
		return fmt.Errorf("%s: changing %s: %w", t.here(), demoKey, err)
	}
	if _, err := t.writer.Create(ctx, configMap(busyName, "0")); err != nil {
		return fmt.Errorf("%s: creating %s: %w", t.here(), busyName, err)
	}
	first, last := "", ""
	for i := 1; i < burst; i++ {
		b, err := t.writer.Patch(ctx, busyName, client.PatchTypeMerge, dataPatch(strconv.Itoa(i)))
		if err != nil {
			return fmt.Errorf("%s: writing %s: %w", t.here(), busyName, err)
		}
		if first == "" {
			first = b.Metadata.ResourceVersion
		}
		last = b.Metadata.ResourceVersion
	}
	t.con.note("%s/%s created, then written %d more times: rv %s to %s", namespace, busyName, burst-1, first, last)
	compacted := t.srv.Faults().CompactNow()
	watches, _ := t.counts()
	t.cable.plugIn()

	rv := demo.Metadata.ResourceVersion
	err = t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": 410 Expired, re-list, tombstone for "+alphaKey, func() bool {
		// Two more watches: the one answered with 410, and the one after
		// the re-list.
		return t.ev.expired > 0 && t.ev.listCount() > lists && t.ev.watchCount() >= watches+2 &&
			t.ev.tombstoned(alphaKey) && t.ev.handled("update", demoKey, rv)
	})
	if err != nil {
		t.ev.mu.Lock()
		last := t.ev.lastError
		t.ev.mu.Unlock()
		if last != nil {
			err = fmt.Errorf("%w (the Reflector's last error: %v)", err, last)
		}
		return err
	}
	t.ev.mu.Lock()
	from := t.ev.watches[watches].rv // the watch that was answered with 410
	t.ev.mu.Unlock()
	t.check("410 Expired for a watch from rv %s: the watch cache's window (%d events) had moved on (the store was compacted at rv %d too); re-listed; %s arrived as a DeletedFinalStateUnknown tombstone; %s rv %s arrived",
		from, historySize, compacted, alphaKey, demoKey, rv)
	return nil
}

// converged is a chapter: the cache equals the server's state.
func (t *tour) converged(ctx context.Context) error {
	t.chapter(chapterConverged())
	list, err := t.writer.List(ctx, api.ListOptions{})
	if err != nil {
		return fmt.Errorf("%s: listing: %w", t.here(), err)
	}
	want := describeObjects(list.Items)
	var got string
	err = t.ev.waitFor(ctx, t.o.StageTimeout, t.here()+": the informer's cache converges on the server's state", func() bool {
		got = describeObjects(t.inf.GetIndexer().List())
		return got == want
	})
	if err != nil {
		return fmt.Errorf("%w\n  server: %s\n  cache:  %s", err, want, got)
	}
	t.con.note("server at rv %s: %s", list.Metadata.ResourceVersion, want)
	t.con.note("informer cache:    %s", got)
	t.check("converged: the cache holds the server's %d objects at the same resourceVersions", len(list.Items))
	return nil
}

// changeDemo patches demo and waits until the handler is told.
func (t *tour) changeDemo(ctx context.Context, step string) (string, error) {
	chapter := t.here()
	demo, err := t.writer.Patch(ctx, demoName, client.PatchTypeMerge, dataPatch(step))
	if err != nil {
		return "", fmt.Errorf("%s: changing %s: %w", chapter, demoKey, err)
	}
	rv := demo.Metadata.ResourceVersion
	err = t.ev.waitFor(ctx, t.o.StageTimeout, chapter+": the change to "+demoKey+" reaches the handler", func() bool {
		return t.ev.handled("update", demoKey, rv)
	})
	return rv, err
}

// killWatchOrAway resets the informer's watch connection, with its cable
// unplugged; if it is between two watches, its next request waits for the
// network, and it is away already.
func (t *tour) killWatchOrAway(ctx context.Context) error {
	t.ev.mu.Lock()
	waiting := t.ev.waiting
	t.ev.mu.Unlock()
	return t.killWatchUnless(ctx, func() bool {
		t.ev.mu.Lock()
		defer t.ev.mu.Unlock()
		return t.ev.waiting > waiting
	})
}

// killWatch resets the informer's watch connection. Between two watches
// there is none to kill, so it tries again briefly.
func (t *tour) killWatch(ctx context.Context) error {
	return t.killWatchUnless(ctx, func() bool { return false })
}

// killWatchUnless kills every watch connection, trying again until one
// was killed or away reports that there is no need.
func (t *tour) killWatchUnless(ctx context.Context, away func() bool) error {
	deadline := time.Now().Add(t.o.StageTimeout)
	for t.srv.Faults().KillWatchConnections() == 0 {
		if away() {
			return nil
		}
		if time.Now().After(deadline) {
			return t.late("a watch connection to kill")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// late is the error of a stage that did not happen within StageTimeout.
// Every wait of the tour ends in these words, whichever stage it was, so
// a learner (and TestTourFailsClearly) can tell a stage that took too
// long from one that went wrong.
func (t *tour) late(what string) error {
	return fmt.Errorf("%s: %s: did not happen within %v", t.here(), what, t.o.StageTimeout)
}

// check adds a line to the final checklist.
func (t *tour) check(format string, args ...any) {
	t.done = append(t.done, fmt.Sprintf(format, args...))
}

func (t *tour) counts() (watches, lists int) {
	t.ev.mu.Lock()
	defer t.ev.mu.Unlock()
	return t.ev.watchCount(), t.ev.listCount()
}

// watchLasted is the time between the last two watches' openings: how
// long the one before the last lasted.
func (t *tour) watchLasted() time.Duration {
	t.ev.mu.Lock()
	defer t.ev.mu.Unlock()
	n := len(t.ev.watches)
	if n < 2 {
		return 0
	}
	return t.ev.watches[n-1].at.Sub(t.ev.watches[n-2].at)
}

func (t *tour) lastWatchRV() string {
	t.ev.mu.Lock()
	defer t.ev.mu.Unlock()
	if len(t.ev.watches) == 0 {
		return ""
	}
	return t.ev.watches[len(t.ev.watches)-1].rv
}

// configMap is a ConfigMap in the tour's namespace with data.step = step.
func configMap(name, step string) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: namespace, Name: name}}
	data, _ := json.Marshal(map[string]string{"step": step})
	_ = o.Set("data", data) // a fixed, valid field name and JSON: cannot fail
	return o
}

// dataPatch is a JSON merge patch setting data.step.
func dataPatch(step string) []byte {
	b, _ := json.Marshal(map[string]any{"data": map[string]string{"step": step}})
	return b
}

// describeObjects renders objects as "key@rv" sorted by key, for comparing
// the cache with the server.
func describeObjects(objs []*api.Object) string {
	s := make([]string, 0, len(objs))
	for _, o := range objs {
		s = append(s, o.Key()+"@"+o.Metadata.ResourceVersion)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}
