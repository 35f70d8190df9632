package uitest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// updateScreenshots writes the screenshots the docs show into ../docs/images
// (go test ./... -update-screenshots); otherwise they go to a temporary
// directory, still taken and checked.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the screenshots into ../docs/images")

// chromiumPackage is the Debian package ./test.sh installs.
const chromiumPackage = "chromium"

// viewport is a projector's.
const viewportW, viewportH = 1280, 720

// browserCtx is the one Chromium every test opens tabs in.
var browserCtx context.Context

func TestMain(m *testing.M) {
	flag.Parse()
	path, err := findChromium()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) // never a silent skip: the browser tests are part of the suite
	}
	profile, err := os.MkdirTemp("", "listwatch-uitest-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		// The flags this machine needs (see the repository's docs): no
		// sandbox as root, no GPU, and none of Chromium's own network
		// traffic, which a closed network refuses.
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(profile),
			chromedp.WindowSize(viewportW, viewportH),
		}
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		defer cancelAlloc()
		ctx, cancel := chromedp.NewContext(allocCtx)
		defer cancel()
		if err := chromedp.Do(ctx); err != nil { // starts the browser
			fmt.Fprintf(os.Stderr, "uitest: starting %s: %v\n", path, err)
			return 1
		}
		browserCtx = ctx
		return m.Run()
	}()
	_ = os.RemoveAll(profile)
	os.Exit(code)
}

// findChromium finds Debian's Chromium, or says how to get it.
func findChromium() (string, error) {
	if p := os.Getenv("LISTWATCH_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("uitest: the browser tests need Chromium and none was found: install Debian's %q package "+
		"(apt-get install -y %s; ./test.sh does this when run as root), or set LISTWATCH_CHROMIUM to a Chromium binary", chromiumPackage, chromiumPackage)
}
